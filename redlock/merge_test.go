package redlock

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/refusal"
)

// gateHook holds every pipeline of one master that carries an acquire until
// the gate opens, and records the locks of each acquire call it passes, so
// that the acquires sent meanwhile queue up and go as one merged call.
type gateHook struct {
	gate chan struct{}

	mu    sync.Mutex
	held  int        // pipelines waiting at the gate
	calls [][]string // the lock keys of each acquire call, in order
}

func newGateHook() *gateHook { return &gateHook{gate: make(chan struct{})} }

func (h *gateHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *gateHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *gateHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var locks [][]string
		for _, cmd := range cmds {
			if a := cmd.Args(); len(a) > 2 && a[1] == acquireScript.Hash() {
				locks = append(locks, lockKeys(a))
			}
		}
		if len(locks) > 0 {
			h.mu.Lock()
			h.held++
			h.calls = append(h.calls, locks...)
			h.mu.Unlock()
			<-h.gate
		}
		return next(ctx, cmds)
	}
}

// lockKeys are the lock keys of an EVALSHA of acquire.lua.
func lockKeys(args []any) []string {
	n := args[2].(int)
	var out []string
	for k := acquireLayout.sharedKeys; k < n; k += acquireLayout.keysPerLock {
		out = append(out, args[3+k].(string))
	}
	return out
}

func (h *gateHook) waiting() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

// mergedCalls are the acquire calls that asked for more than one lock.
func (h *gateHook) mergedCalls() [][]string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out [][]string
	for _, c := range h.calls {
		if len(c) > 1 {
			out = append(out, c)
		}
	}
	return out
}

// queueAcquires takes n leases on keys prefix:0..n-1 (masters 0 and 1
// grant them) while master 2's pipelines wait at the gate: the first two
// acquires hold both of its workers there, the others queue behind them.
// It then opens the gate: master 2 gets the queued acquires as merged calls.
func queueAcquires(t *testing.T, r *rig, c *Client, prefix string, n int) ([]*Lease, *gateHook) {
	t.Helper()
	hook := newGateHook()
	r.clients[2].AddHook(hook)
	t.Cleanup(func() {
		select {
		case <-hook.gate:
		default:
			close(hook.gate)
		}
	})
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
	eventually(t, 10*time.Second, "both of master 2's workers at the gate", func() bool { return hook.waiting() == batchWorkers })
	for i := batchWorkers; i < n; i++ {
		take(i)
	}
	close(hook.gate)
	return leases, hook
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
	leases, hook := queueAcquires(t, r, c, "merged", n)
	ctx := context.Background()
	eventually(t, 10*time.Second, "master 2 holds every key", func() bool {
		for _, l := range leases {
			if v, err := r.clients[2].Get(ctx, l.key).Result(); err != nil || v != l.value {
				return false
			}
		}
		return true
	})
	merged := hook.mergedCalls()
	if len(merged) == 0 {
		t.Fatalf("master 2 got no merged acquire: %v", hook.calls)
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
	leases, hook := queueAcquires(t, r, c, "isolated", n)
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
	if !slices.ContainsFunc(hook.mergedCalls(), func(locks []string) bool { return slices.Contains(locks, bad) }) {
		t.Fatalf("%s was not in a merged call: %v", bad, hook.calls)
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
