package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// Many goroutines of several clients take overlapping sets of keys, each set
// listed in a random order: nobody deadlocks, and no key is ever held by two
// of them at once. Tokens grow per key across holders.
func TestLockAllOverlappingSetsNeverDeadlockOrOverlap(t *testing.T) {
	r := newRig(t, 5)
	clients := []*Client{r.client(t), r.client(t), r.client(t)}
	keys := []string{"item:a", "item:b", "item:c", "funds:x", "funds:y"}
	const workers, rounds = 12, 12
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()

	var mu sync.Mutex
	inUse := make(map[string]int)
	lastToken := make(map[string]fencing.Token)
	var problems []string
	done := 0
	var wg sync.WaitGroup
	for w := range workers {
		c := clients[w%len(clients)]
		rng := rand.New(rand.NewPCG(uint64(w), 7))
		wg.Go(func() {
			for range rounds {
				set := rng.Perm(len(keys))[:2+rng.IntN(2)]
				want := make([]string, len(set))
				for i, k := range set {
					want[i] = keys[k]
				}
				l, err := c.LockAll(ctx, want, 5*time.Second)
				if err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("LockAll %v: %v", want, err))
					mu.Unlock()
					return
				}
				mu.Lock()
				for k, tok := range l.Tokens() {
					if inUse[k]++; inUse[k] > 1 {
						problems = append(problems, fmt.Sprintf("%s held twice", k))
					}
					if tok <= lastToken[k] {
						problems = append(problems, fmt.Sprintf("%s: token %d after %d", k, tok, lastToken[k]))
					}
					lastToken[k] = tok
				}
				mu.Unlock()
				time.Sleep(time.Millisecond)
				mu.Lock()
				for _, k := range l.Keys() {
					inUse[k]--
				}
				done++
				mu.Unlock()
				if err := l.Release(ctx); err != nil {
					mu.Lock()
					problems = append(problems, fmt.Sprintf("Release %v: %v", want, err))
					mu.Unlock()
				}
			}
		})
	}
	wg.Wait()
	for _, p := range problems[:min(len(problems), 10)] {
		t.Error(p)
	}
	if done != workers*rounds {
		t.Fatalf("%d of %d critical sections", done, workers*rounds)
	}
}

// All or nothing: when one key is held elsewhere, TryLockAll fails and the
// keys it took before are free again; a lease of several keys ends when any
// of its keys' leases ends.
func TestTryLockAllIsAllOrNothing(t *testing.T) {
	r := newRig(t, 5)
	c, other := r.client(t), r.client(t)
	ctx := context.Background()
	held, err := other.TryLock(ctx, "b", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(ctx)
	if _, err := c.TryLockAll(ctx, []string{"c", "b", "a"}, 10*time.Second); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLockAll with b held elsewhere: %v", err)
	}
	a, err := other.TryLock(ctx, "a", 10*time.Second)
	if err != nil {
		t.Fatalf("a after the failed TryLockAll: %v", err)
	}
	_ = a.Release(ctx)

	if _, err := c.TryLockAll(ctx, []string{"x", "x"}, time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("duplicate keys: %v", err)
	}
	if _, err := c.TryLockAll(ctx, nil, time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("no keys: %v", err)
	}

	l, err := c.TryLockAll(ctx, []string{"y", "x"}, 500*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	if got := l.Keys(); len(got) != 2 || got[0] != "x" || got[1] != "y" {
		t.Fatalf("Keys = %v; want sorted [x y]", got)
	}
	if toks := l.Tokens(); len(toks) != 2 || toks["x"] == 0 || toks["y"] == 0 {
		t.Fatalf("Tokens = %v", toks)
	}
	select {
	case <-l.Done():
	case <-time.After(3 * time.Second):
		t.Fatal("a lease of several keys outlived its parts' validity")
	}
	if !errors.Is(l.Err(), ErrLockLost) || !errors.Is(l.Release(ctx), ErrLockLost) {
		t.Fatalf("Err %v after the parts ran out; want ErrLockLost", l.Err())
	}
}

// A lease of several keys that ended stops every key's renewal and frees
// the others: LockAll([a b], WithAutoExtend()), then b deleted on every
// master; Done closes, a is gone from every master (not renewed for ever),
// and another client locks a.
func TestLockAllEndedLeaseFreesItsOtherKeys(t *testing.T) {
	r := newRig(t, 5)
	c, other := r.client(t), r.client(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	l, err := c.LockAll(ctx, []string{"a", "b"}, 900*time.Millisecond, WithAutoExtend())
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range r.clients {
		if err := rc.Del(ctx, "b").Err(); err != nil {
			t.Fatal(err)
		}
	}
	select {
	case <-l.Done():
	case <-ctx.Done():
		t.Fatal("the lease of [a b] outlived b")
	}
	if !errors.Is(l.Err(), ErrLockLost) {
		t.Fatalf("Err = %v after b was deleted; want ErrLockLost", l.Err())
	}
	eventually(t, 10*time.Second, "a gone from every master once the lease of [a b] ended", func() bool {
		return countNonEmpty(r.values(t, "a")) == 0
	})
	a, err := other.TryLock(ctx, "a", time.Second)
	if err != nil {
		t.Fatalf("another client on a, after the lease of [a b] ended: %v", err)
	}
	_ = a.Release(ctx)
	if err := l.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Release of the ended lease: %v; want ErrLockLost", err)
	}
}

// replyDelay answers every command (and pipeline) d late, as a slow link
// does: the command runs on the master at once.
type replyDelay time.Duration

func (replyDelay) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d replyDelay) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		time.Sleep(time.Duration(d))
		return err
	}
}

func (d replyDelay) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		time.Sleep(time.Duration(d))
		return err
	}
}

// TryLockAll of 150 keys with a 500 ms TTL, each reply 3 ms late: taking
// them one after the other outlasts the first key's validity, so it fails
// (it returned a lease whose validity had ended) and leaves no key behind;
// LockAll of the same free keys fails too instead of starting over for
// ever. With a TTL long enough, the lease's validity is the first key's.
func TestTryLockAllNeverReturnsAnExpiredLease(t *testing.T) {
	r := newRig(t, 3)
	for _, rc := range r.clients {
		rc.AddHook(replyDelay(3 * time.Millisecond))
	}
	c := r.client(t)
	keys := make([]string, 150)
	for i := range keys {
		keys[i] = fmt.Sprintf("many:%03d", i)
	}
	ctx, cancel := context.WithTimeout(context.Background(), 60*time.Second)
	defer cancel()
	const ttl = 500 * time.Millisecond
	noneLeft := func(what string) {
		t.Helper()
		eventually(t, 10*time.Second, "no key left after "+what, func() bool {
			for _, k := range keys {
				if countNonEmpty(r.values(t, k)) > 0 {
					return false
				}
			}
			return true
		})
	}
	start := time.Now()
	l, err := c.TryLockAll(ctx, keys, ttl)
	if err == nil {
		t.Fatalf("TryLockAll returned a lease after %v whose validity ends at %v (%v from now); want an error",
			time.Since(start), l.ValidUntil(), time.Until(l.ValidUntil()))
	}
	if !errors.Is(err, ErrNotAcquired) || !strings.Contains(err.Error(), "no validity left") {
		t.Fatalf("TryLockAll outlasting its TTL: %v; want ErrNotAcquired saying no validity is left", err)
	}
	t.Logf("TryLockAll: %v", err)
	noneLeft("TryLockAll")

	if _, err := c.LockAll(ctx, keys, ttl); err == nil || ctx.Err() != nil || !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("LockAll of free keys that cannot be held together: %v (ctx %v); want ErrNotAcquired, not a wait for ever", err, ctx.Err())
	}
	noneLeft("LockAll")

	l, err = c.TryLockAll(ctx, keys, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if first := l.kind.(manyKeys).parts[0].ValidUntil(); !l.ValidUntil().Equal(first) {
		t.Fatalf("ValidUntil %v; want the first key's %v", l.ValidUntil(), first)
	}
}
