package redlock

import (
	"context"
	"fmt"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// sameBucket returns n keys of one fence bucket (of DefaultFenceBuckets):
// prefix/0 and those of prefix/1, prefix/2, ... that hash to its bucket.
func sameBucket(prefix string, n int) []string {
	out := []string{prefix + "/0"}
	want := keys.BucketOf(out[0], DefaultFenceBuckets)
	for i := 1; len(out) < n; i++ {
		if k := fmt.Sprintf("%s/%d", prefix, i); keys.BucketOf(k, DefaultFenceBuckets) == want {
			out = append(out, k)
		}
	}
	return out
}

// writeBackBarrier is a go-redis hook, on every master's client, that holds
// each write-back command until write-backs of `want` distinct attempts (lock
// values) have been sent, or until a timeout: every attempt has read the
// counters (round 1) before any write-back runs, so they all propose one
// token to one counter.
type writeBackBarrier struct {
	want    int
	timeout time.Duration

	mu     sync.Mutex
	values map[string]bool
	first  map[string]string // per lock value, the token of its first write-back
	all    chan struct{}     // closed once want values were seen
}

func newWriteBackBarrier(want int) *writeBackBarrier {
	return &writeBackBarrier{want: want, timeout: 5 * time.Second, values: map[string]bool{}, first: map[string]string{},
		all: make(chan struct{})}
}

// firstTokens returns the token of each attempt's first write-back.
func (h *writeBackBarrier) firstTokens() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	var out []string
	for _, tok := range h.first {
		out = append(out, tok)
	}
	return out
}

func (h *writeBackBarrier) wait(cmds []redis.Cmder) {
	for _, cmd := range cmds {
		args := cmd.Args()
		// evalsha SHA 4 key bucket cert incarnation value token
		if len(args) != 9 || cmd.Name() != "evalsha" || args[1] != writeBackScript.Hash() {
			continue
		}
		h.mu.Lock()
		if v := fmt.Sprint(args[7]); !h.values[v] {
			h.values[v] = true
			h.first[v] = fmt.Sprint(args[8])
			if len(h.values) == h.want {
				close(h.all)
			}
		}
		h.mu.Unlock()
		select {
		case <-h.all:
		case <-time.After(h.timeout):
		}
		return
	}
}

func (h *writeBackBarrier) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *writeBackBarrier) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.wait([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}
func (h *writeBackBarrier) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.wait(cmds)
		return next(ctx, cmds)
	}
}

// Two keys of one fence bucket acquired at once by two clients whose
// proposals are stale: both read the bucket's counter (100) in round 1, and
// both write back 101 to it, each on the masters its round 1 counted (a
// quorum, so the two sets share a master at least). On a shared master one
// write-back lands first; the other finds the counter already at its token
// and must not take it (writeback.lua's "at or above"), so that attempt goes
// on above it. Which attempt loses, and whether both do (each first on a
// master of its own), is the schedule's; that one goes above 101 and the two
// differ is not. Accepting the equal counter (the mutant writeback-equal)
// hands token 101 to both leases. The barrier orders both reads before both
// writes.
func TestKeysOfABucketNeverShareAToken(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	ks := sameBucket("pair", 2)
	a, b := r.client(t), r.client(t)
	warmUp(t, a)
	warmUp(t, b)
	bucket := keys.Bucket(keys.BucketOf(ks[0], DefaultFenceBuckets))
	barrier := newWriteBackBarrier(2)
	for i, c := range r.Clients(t) {
		// Above either Client's proposal: both attempts take round 2.
		if err := c.Set(ctx, bucket, "100", 0).Err(); err != nil {
			t.Fatal(err)
		}
		r.clients[i].AddHook(barrier)
	}
	var la, lb *Lease
	var ea, eb error
	var wg sync.WaitGroup
	wg.Go(func() { la, ea = a.TryLock(ctx, ks[0], 10*time.Second) })
	wg.Go(func() { lb, eb = b.TryLock(ctx, ks[1], 10*time.Second) })
	wg.Wait()
	if ea != nil || eb != nil {
		t.Fatalf("TryLock of two free keys: %v, %v", ea, eb)
	}
	defer la.Release(ctx)
	defer lb.Release(ctx)
	if la.Token() == lb.Token() {
		t.Fatalf("keys %s and %s of one bucket both got token %d", ks[0], ks[1], la.Token())
	}
	if got := barrier.firstTokens(); len(got) != 2 || got[0] != "101" || got[1] != "101" {
		t.Fatalf("first write-backs proposed %v; want 101 from both attempts (the race this test is about)", got)
	}
	if max(la.Token(), lb.Token()) <= 101 {
		t.Fatalf("tokens %d and %d: want one above 101 (a write-back refused where the other landed first)", la.Token(), lb.Token())
	}
}

// Keys of one bucket taken and released over and over by clients of their
// own, all at once: the write-backs race for the bucket's counter as they
// come (stale proposals, no hook), and no token is ever handed out twice.
// Without the barrier above this finds the mutant writeback-equal only when
// two rounds happen to race; TestKeysOfABucketNeverShareAToken always does.
func TestBucketTokensUniqueUnderContention(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	const workers, rounds = 4, 40
	ks := sameBucket("busy", workers)
	var mu sync.Mutex
	seen := map[fencing.Token]string{}
	var wg sync.WaitGroup
	for w := range workers {
		c := r.client(t)
		wg.Go(func() {
			for i := range rounds {
				l, err := c.TryLock(ctx, ks[w], 5*time.Second)
				if err != nil {
					t.Errorf("worker %d, round %d: %v", w, i, err)
					return
				}
				mu.Lock()
				if prev, dup := seen[l.Token()]; dup {
					t.Errorf("token %d handed out to %s and again to %s (round %d)", l.Token(), prev, ks[w], i)
				}
				seen[l.Token()] = ks[w]
				mu.Unlock()
				_ = l.Release(ctx)
			}
		})
	}
	wg.Wait()
	if len(seen) != workers*rounds && !t.Failed() {
		t.Fatalf("%d distinct tokens for %d leases", len(seen), workers*rounds)
	}
}
