package redlock

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/cenkalti/backoff/v4"
	"github.com/redis/go-redis/v9"
)

// A refused round 1 reports how many clients wait for the key (subscribers
// of its release channel): Lock skips the anti-herd delay only when that is
// at most one, its own subscription.
func TestRefusalCountsWaitingClients(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	holder := r.client(t)
	lease, err := holder.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)

	c := r.client(t)
	refused := func() attemptReport {
		t.Helper()
		_, info, err := c.attempt(ctx, "k", 10*time.Second, lockConfig{}, false, nil)
		if !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("attempt on a held key: %v; want ErrNotAcquired", err)
		}
		return info
	}
	if info := refused(); info.waiting != 0 {
		t.Fatalf("nobody waits, but the refusal reported %d waiting clients", info.waiting)
	}

	wctx, cancel := context.WithCancel(ctx)
	done := make(chan error, 2)
	for range 2 {
		w := r.client(t)
		go func() {
			_, err := w.Lock(wctx, "k", 10*time.Second)
			done <- err
		}()
	}
	eventually(t, 10*time.Second, "both waiters subscribed on every master", func() bool {
		for _, rc := range r.clients {
			n, err := rc.PubSubNumSub(ctx, keys.ChannelPrefix+"k").Result()
			if err != nil || n[keys.ChannelPrefix+"k"] != 2 {
				return false
			}
		}
		return true
	})
	if info := refused(); info.waiting != 2 {
		t.Fatalf("two other clients wait, but the refusal reported %d", info.waiting)
	}
	cancel()
	for range 2 {
		if err := <-done; !errors.Is(err, context.Canceled) {
			t.Fatalf("a waiter whose context was cancelled returned %v", err)
		}
	}
}

// A waiter refused by a holder (every master said "another owner's") waits
// for the release or its backoff, here an hour: one attempt. A waiter whose
// attempt split the vote (a master granted, the others were taken) retries
// after a few attempt durations, not after the backoff: nobody may hold the
// key, and then no release would wake it.
func TestSplitVoteRetriesSoonRefusalWaits(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	acquires := acquireCounter()
	for _, script := range []*redis.Script{acquireScript, acquireManyScript} {
		if err := script.Load(ctx, r.clients[2]).Err(); err != nil { // no EVAL after NOSCRIPT to count twice
			t.Fatal(err)
		}
	}
	r.clients[2].AddHook(acquires)
	c := r.client(t, WithReleaseNotifications(false),
		WithRetry(func() backoff.BackOff { return backoff.NewConstantBackOff(time.Hour) }))
	attempts := func(key string, heldOn ...int) int64 {
		t.Helper()
		for _, i := range heldOn {
			if err := r.clients[i].Set(ctx, key, "another owner", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
		before := acquires.n.Load()
		wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
		defer cancel()
		if _, err := c.Lock(wctx, key, 10*time.Second); !errors.Is(err, context.DeadlineExceeded) {
			t.Fatalf("Lock(%q) held on masters %v: %v; want the context's deadline", key, heldOn, err)
		}
		return acquires.n.Load() - before
	}
	if n := attempts("refused", 0, 1, 2); n != 1 {
		t.Fatalf("held on every master: %d attempts in 2 s with an hour's backoff, want 1", n)
	}
	if n := attempts("split", 0, 1); n < 3 {
		t.Fatalf("held on two masters of three, granted by the third: %d attempts in 2 s, want at least 3", n)
	}
}

func TestLocalHoldersCountLeasesAndStayBounded(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	c := r.client(t)
	if c.holders.holds("k") {
		t.Fatal("holds k before any lease")
	}
	l, err := c.TryLock(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if !c.holders.holds("k") {
		t.Fatal("does not hold k while its lease is held")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if c.holders.holds("k") {
		t.Fatal("holds k after Release")
	}

	h := newLocalHolders()
	for i := range 16 * maxHoldersPerShard * 2 {
		h.add(fmt.Sprintf("key-%d", i))
	}
	total := 0
	for i := range h.shards {
		total += len(h.shards[i].n)
	}
	if total > 16*maxHoldersPerShard {
		t.Fatalf("%d keys remembered, bound %d", total, 16*maxHoldersPerShard)
	}
}

// A user without +pubsub|numsub still gets a refusal (the script asks with
// redis.pcall), and Lock assumes a herd.
func TestRefusalWithoutNumsubPermissionAssumesAHerd(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	var limited []redis.UniversalClient
	for i, rc := range r.clients {
		if err := rc.Do(ctx, "ACL", "SETUSER", "nonumsub", "reset", "on", ">pw", "~*", "&*", "+@all", "-pubsub|numsub").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.Set(ctx, "k", "another owner", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
		lc := redis.NewClient(&redis.Options{Addr: r.Servers[i].Addr, Username: "nonumsub", Password: "pw"})
		t.Cleanup(func() { _ = lc.Close() })
		limited = append(limited, lc)
	}
	c, err := New(limited, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, info, err := c.attempt(ctx, "k", 10*time.Second, lockConfig{}, false, nil)
	if !errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNoQuorum) {
		t.Fatalf("refused without +pubsub|numsub: %v; want a plain refusal (ErrNotAcquired, not ErrNoQuorum)", err)
	}
	if info.waiting != waitingUnknown {
		t.Fatalf("waiting %d; want waitingUnknown", info.waiting)
	}
}
