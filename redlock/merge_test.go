package redlock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/refusal"
)

// queueAcquires takes n leases on keys prefix:0..n-1 (masters 0 and 1
// grant them) while master 2's pipelines wait at the gate: the first two
// acquires hold both of its workers there, the others queue behind them.
// It then opens the gate: master 2 gets the queued acquires as merged calls.
func queueAcquires(t *testing.T, r *rig, c *Client, prefix string, n int) ([]*Lease, *pipelineGate) {
	t.Helper()
	gate := newPipelineGate("evalsha", true)
	r.clients[2].AddHook(gate)
	t.Cleanup(gate.open)
	leases := make([]*Lease, n)
	take := func(i int) {
		l, err := c.TryLock(context.Background(), fmt.Sprintf("%s:%d", prefix, i), 2*time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		leases[i] = l
	}
	for i := range batchWorkers {
		take(i)
	}
	eventually(t, 10*time.Second, "both of master 2's workers at the gate", func() bool { return gate.heldNow() == batchWorkers })
	for i := batchWorkers; i < n; i++ {
		take(i)
	}
	gate.open()
	return leases, gate
}

// answered waits for lease l's acquire answer from master i.
func answered(t *testing.T, l *Lease, i int) reply[grant] {
	t.Helper()
	select {
	case <-l.acq[i].done:
		return l.acq[i].rep
	case <-time.After(10 * time.Second):
		t.Fatalf("%s: no answer from master %d", l.key, i)
		return reply[grant]{}
	}
}

// Acquires queued together for one master go as one call, and each lock
// gets its own answer: every key is held there by its own lease, and each
// lease's token was raised there (the answers were not swapped).
func TestMergedAcquiresAnswerEachLock(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t, WithMasterTimeout(20*time.Second))
	warmUpEverywhere(t, r, c)
	const n = 12
	leases, gate := queueAcquires(t, r, c, "merged", n)
	ctx := context.Background()
	eventually(t, 10*time.Second, "master 2 holds every key", func() bool {
		for _, l := range leases {
			if v, err := r.clients[2].Get(ctx, l.key).Result(); err != nil || v != l.value {
				return false
			}
		}
		return true
	})
	merged := gate.mergedCalls(acquireMerge)
	if len(merged) == 0 {
		t.Fatalf("master 2 got no merged acquire: %v", gate.sent)
	}
	for _, l := range leases {
		if rep := answered(t, l, 2); rep.err != nil || !rep.val.granted || !rep.val.raised {
			t.Errorf("%s: master 2 answered %+v", l.key, rep)
		}
		bucket := keys.Bucket(keys.BucketOf(l.key, DefaultFenceBuckets))
		got, err := r.clients[2].Get(ctx, bucket).Uint64()
		if err != nil || got < uint64(l.Token()) {
			t.Errorf("%s: master 2's counter %s is %d (%v), below its token %d", l.key, bucket, got, err, l.Token())
		}
	}
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, l := range leases {
		gone(t, r.clients, l.key)
	}
}

// One lock's error in a merged call is its own: a key whose earlier-version
// counter is a list on master 2 gets WRONGTYPE there, while the locks merged
// with it are granted; its lease stands on the other two, and its release
// removes the key its SET left on master 2 before the error.
func TestMergedAcquireKeepsALocksErrorItsOwn(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t, WithMasterTimeout(20*time.Second))
	warmUpEverywhere(t, r, c)
	const n = 12
	bad := fmt.Sprintf("isolated:%d", n-1) // queued: not one of the two calls at the gate
	r.admin(t, 2, "LPUSH", keys.Legacy(bad), "not a counter")
	leases, gate := queueAcquires(t, r, c, "isolated", n)
	ctx := context.Background()
	eventually(t, 10*time.Second, "master 2 holds every other key", func() bool {
		for _, l := range leases {
			v, err := r.clients[2].Get(ctx, l.key).Result()
			if l.key != bad && (err != nil || v != l.value) {
				return false
			}
		}
		return true
	})
	if !slices.ContainsFunc(gate.mergedCalls(acquireMerge), func(locks []string) bool { return slices.Contains(locks, bad) }) {
		t.Fatalf("%s was not in a merged call: %v", bad, gate.sent)
	}
	for _, l := range leases {
		rep := answered(t, l, 2)
		switch {
		case l.key == bad && (rep.err == nil || !strings.HasPrefix(rep.err.Error(), "WRONGTYPE") || !refusal.ForGood(rep.err)):
			t.Errorf("%s: master 2 answered %+v; want WRONGTYPE, a refusal for good", l.key, rep)
		case l.key != bad && (rep.err != nil || !rep.val.granted):
			t.Errorf("%s: master 2 answered %+v; want a grant", l.key, rep)
		}
	}
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			t.Fatalf("%s: %v", l.key, err)
		}
	}
	for _, l := range leases {
		gone(t, r.clients, l.key) // the refused key too: its SET ran before the error
	}
}

// acquire_many.lua answers each lock as acquire.lua answers it alone, and
// leaves the same keys: each case prepares the same state on two masters,
// runs one lock's acquire.lua on master 0 and the same lock, merged between
// two other locks, on master 1, and compares the answers and the lock key,
// its counter and its TTL's lambda entry after.
func TestMergedAndLoneAcquiresAgree(t *testing.T) {
	r := newRig(t, 2)
	ctx := context.Background()
	const ttl = 10 * time.Second
	member := fmt.Sprint(ttl.Milliseconds())
	type step func(rc redis.UniversalClient, key string) error
	bucketOf := func(key string) string { return keys.Bucket(keys.BucketOf(key, DefaultFenceBuckets)) }
	lambdaAt := func(ahead time.Duration) step {
		return func(rc redis.UniversalClient, _ string) error {
			now, err := rc.Time(ctx).Result()
			if err != nil {
				return err
			}
			return rc.ZAdd(ctx, keys.Lambda, redis.Z{Score: float64(now.Add(ahead).UnixMilli()), Member: member}).Err()
		}
	}
	cases := []struct {
		name     string
		state    step
		proposal fencing.Token
		released string
		fencing  bool
	}{
		{name: "free", proposal: 5, fencing: true},
		{name: "own value again", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, key, "v-new", ttl).Err() }},
		{name: "own released value", proposal: 5, fencing: true, released: "v-old",
			state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, key, "v-old", ttl).Err() }},
		{name: "another's", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, key, "other", ttl).Err() }},
		{name: "counter above the proposal", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, bucketOf(key), "7", 0).Err() }},
		{name: "earlier-version counter", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.Set(ctx, keys.Legacy(key), "9", 0).Err() }},
		{name: "floor", proposal: 20, fencing: true,
			state: func(rc redis.UniversalClient, _ string) error { return rc.Set(ctx, keys.Floor, "11", 0).Err() }},
		{name: "lambda entry covering", proposal: 5, fencing: true, state: lambdaAt(10 * ttl)},
		{name: "lambda entry short", proposal: 5, fencing: true, state: lambdaAt(ttl / 2)},
		{name: "fencing off"},
		{name: "certified", proposal: 5, fencing: true, state: func(rc redis.UniversalClient, _ string) error {
			return rc.MSet(ctx, keys.Cert, "cert-1", keys.Incarnation, "inc-1").Err()
		}},
		{name: "another fence-bucket count", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, _ string) error { return rc.Set(ctx, keys.FenceBuckets, "7", 0).Err() }},
		{name: "counter of another type", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.LPush(ctx, bucketOf(key), "x").Err() }},
		{name: "earlier-version counter of another type", proposal: 5, fencing: true,
			state: func(rc redis.UniversalClient, key string) error { return rc.LPush(ctx, keys.Legacy(key), "x").Err() }},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			key := fmt.Sprintf("agree:%d", i)
			buckets := ""
			if tc.fencing {
				buckets = fmt.Sprint(DefaultFenceBuckets)
			}
			call := func(k string, ttl time.Duration, proposal fencing.Token, released string) *queued {
				return &queued{call: acquireCall(k, keys.BucketOf(k, DefaultFenceBuckets), "v-new", ttl, proposal, released, buckets)}
			}
			for _, rc := range r.clients {
				if err := rc.FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
				if tc.state != nil {
					if err := tc.state(rc, key); err != nil {
						t.Fatal(err)
					}
				}
			}
			lone := call(key, ttl, tc.proposal, tc.released).call
			loneCmd := lone.script.Run(ctx, r.clients[0], lone.keys, lone.args...)
			// The neighbours: another TTL, no proposal, so that they change
			// nothing the case's lock reads.
			run := []*queued{call(key+":before", 7*time.Second, 0, ""), call(key, ttl, tc.proposal, tc.released), call(key+":after", 7*time.Second, 0, "")}
			merged := acquireMerge.merge(run)
			mergedCmd := acquireMerge.split(merged.script.Run(ctx, r.clients[1], merged.keys, merged.args...), len(run))[1]

			lg, lerr := answerOf(loneCmd)
			mg, merr := answerOf(mergedCmd)
			if firstWord(lerr) != firstWord(merr) || lg != mg {
				t.Fatalf("acquire.lua answered %+v, %v; acquire_many.lua %+v, %v", lg, lerr, mg, merr)
			}
			for _, k := range []string{key, bucketOf(key)} {
				a, errA := r.clients[0].Get(ctx, k).Result()
				b, errB := r.clients[1].Get(ctx, k).Result()
				if a != b || firstWord(errA) != firstWord(errB) {
					t.Errorf("%s after: %q (%v) alone, %q (%v) merged", k, a, errA, b, errB)
				}
			}
			a, errA := r.clients[0].ZScore(ctx, keys.Lambda, member).Result()
			b, errB := r.clients[1].ZScore(ctx, keys.Lambda, member).Result()
			if (errA == nil) != (errB == nil) || a-b > 1000 || b-a > 1000 {
				t.Errorf("lambda entry after: %v (%v) alone, %v (%v) merged", a, errA, b, errB)
			}
		})
	}
}

// answerOf is an acquire answer as a round reads it.
func answerOf(cmd *redis.Cmd) (grant, error) {
	res, err := cmd.Slice()
	if err != nil {
		return grant{}, err
	}
	return parseGrant(res)
}

// firstWord is an error's code (WRONGTYPE, QLBUCKETS), or "" for nil.
func firstWord(err error) string {
	if err == nil {
		return ""
	}
	w, _, _ := strings.Cut(err.Error(), " ")
	return w
}
