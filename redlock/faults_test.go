package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestMajorityWithTwoMastersPaused(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	pause(t, r, 3, 4)

	ctx := context.Background()
	lease, err := c.TryLock(ctx, "orders", 5*time.Second)
	if err != nil {
		t.Fatalf("TryLock with 3 of 5 masters up: %v", err)
	}
	if !time.Now().Before(lease.ValidUntil()) {
		t.Fatalf("lease already invalid: %v", lease.ValidUntil())
	}
	if _, err := c.TryLock(ctx, "orders", 5*time.Second); !errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNoQuorum) {
		t.Fatalf("second TryLock: got %v, want ErrNotAcquired (held by another owner), not ErrNoQuorum", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release with 3 of 5 masters up: %v", err)
	}
	resume(t, r, 3, 4)
	eventually(t, 5*time.Second, "no key left after release", func() bool { return countNonEmpty(r.values(t, "orders")) == 0 })
}

func TestFailsFastWithThreeMastersPaused(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(100*time.Millisecond))
	pause(t, r, 0, 2, 4)

	lease, err := c.TryLock(context.Background(), "orders", 10*time.Second)
	if err == nil {
		t.Fatalf("TryLock with 2 of 5 masters up succeeded: %v", lease)
	}
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrNotAcquired) || !errors.Is(err, ErrMasterTimeout) {
		t.Fatalf("got %v; want ErrNoQuorum, ErrNotAcquired and ErrMasterTimeout", err)
	}
	var e *Error
	if !errors.As(err, &e) || e.Granted != 2 || e.Quorum != 3 {
		t.Fatalf("got %#v; want Granted 2, Quorum 3", e)
	}
}

// A SIGSTOPped master keeps the SET NX of a failed attempt in its socket and
// applies it on SIGCONT. The client must delete it then, not leave it for
// its TTL (60 s here, far longer than the test waits).
func TestNoKeyLeftAfterFailedAttemptOnceResumed(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(100*time.Millisecond))
	pause(t, r, 1, 2, 3)

	if _, err := c.TryLock(context.Background(), "stock", time.Minute); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with 2 of 5 up: got %v, want ErrNoQuorum", err)
	}
	time.Sleep(300 * time.Millisecond) // let cleanup retries pile against the paused masters
	resume(t, r, 1, 2, 3)
	eventually(t, 10*time.Second, "no lock key on any master", func() bool {
		return countNonEmpty(r.values(t, "stock")) == 0
	})
	// The queued SETs did run on resume; the key is gone because the
	// client deleted it, and nothing else is stranded: a new attempt wins
	// (the first may still find the resumed masters suspect and fail fast;
	// that round pings them, and Lock's next attempt counts them).
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := c.Lock(ctx, "stock", time.Minute)
	if err != nil {
		t.Fatalf("Lock after resume: %v", err)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

func TestValidityShrinksWhenMastersAreSlow(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(5*time.Second))
	const ttl, slow = 10 * time.Second, 300 * time.Millisecond
	pause(t, r, 0, 1, 2) // a majority must wait for one of these

	go func() {
		time.Sleep(slow)
		_ = r.Servers[2].Resume()
	}()
	lease, err := c.TryLock(context.Background(), "slow", ttl)
	if err != nil {
		t.Fatalf("TryLock: %v", err)
	}
	// The remaining validity is ttl − elapsed − drift, and elapsed includes the
	// wait for the paused master.
	validity := time.Until(lease.ValidUntil())
	maxValidity := c.validity(ttl) - slow
	if validity > maxValidity || validity <= 0 {
		t.Fatalf("remaining validity %v after waiting %v for a master; want in (0, %v]", validity, slow, maxValidity)
	}
}

func TestLostLeaseReportsErrLockLost(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "short", 200*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after the validity ran out")
	}
	if cause := context.Cause(lease.Context()); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("Context cause = %v, want ErrLockLost", cause)
	}
	if err := lease.Extend(ctx, time.Second); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Extend of a lost lease: %v, want ErrLockLost", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Release of a lost lease: %v, want ErrLockLost", err)
	}
}

func TestExtendAfterTakeoverFailsAndLeavesNewHolderAlone(t *testing.T) {
	r := newRig(t, 5)
	a, b := r.client(t), r.client(t)
	ctx := context.Background()
	old, err := a.TryLock(ctx, "job", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "A's keys expired", func() bool { return countNonEmpty(r.values(t, "job")) == 0 })
	cur, err := b.TryLock(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// TryLock returns at a majority; the other grants land just after.
	eventually(t, 5*time.Second, "new holder's key on every master", func() bool {
		return countNonEmpty(r.values(t, "job")) == 5
	})
	before := r.values(t, "job")

	if err := old.Extend(ctx, 10*time.Second); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Extend after takeover: %v, want ErrLockLost", err)
	}
	if err := old.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Release after takeover: %v, want ErrLockLost", err)
	}
	after := r.values(t, "job")
	for i := range before {
		if before[i] != after[i] {
			t.Fatalf("master %d: new holder's key changed from %q to %q", i, before[i], after[i])
		}
	}
	if countNonEmpty(after) != 5 {
		t.Fatalf("new holder's key on %d masters, want 5", countNonEmpty(after))
	}
	if err := cur.Release(ctx); err != nil {
		t.Fatalf("new holder's Release: %v", err)
	}
}

// Extend must never recreate a key that expired: here the lease's keys are
// deleted behind its back on a majority while it still believes it is valid.
func TestExtendNeverRevivesAKey(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "revive", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Grants after the decision still land: wait for all five, so that the
	// deletes below are not overtaken by a late SET.
	eventually(t, 5*time.Second, "key on every master", func() bool {
		return countNonEmpty(r.values(t, "revive")) == 5
	})
	for i := range 3 {
		if err := r.clients[i].Del(ctx, "revive").Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := lease.Extend(ctx, 10*time.Second); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Extend with keys gone on 3 of 5: %v, want ErrLockLost", err)
	}
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after Extend found the lease lost")
	}
	eventually(t, 5*time.Second, "no key recreated, the rest removed", func() bool {
		return countNonEmpty(r.values(t, "revive")) == 0
	})
}

// go-redis clients built with defaults block a read on a stalled master for
// ReadTimeout (5 s) and ignore context deadlines. An attempt must not wait
// for them.
func TestDefaultGoRedisClientsStillFailFast(t *testing.T) {
	r := newRig(t, 5)
	var clients []redis.UniversalClient
	for _, s := range r.Servers {
		rc := redis.NewClient(&redis.Options{Addr: s.Addr})
		t.Cleanup(func() { _ = rc.Close() })
		clients = append(clients, rc)
	}
	c, err := New(clients, WithoutQuarantine(), WithMasterTimeout(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pause(t, r, 0, 1)
	lease, err := c.TryLock(ctx, "defaults", 10*time.Second)
	if err != nil {
		t.Fatalf("TryLock with 3 of 5 up: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release with 3 of 5 up: %v", err)
	}

	pause(t, r, 2)
	start := time.Now()
	if _, err := c.TryLock(ctx, "defaults", 10*time.Second); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("TryLock with 2 of 5 up: %v, want ErrNoQuorum", err)
	}
	// Not a speed test: 5 s is go-redis's ReadTimeout, so taking it would mean
	// the attempt waited on a blocked read instead of its own 100 ms timer.
	if took := time.Since(start); took >= 5*time.Second {
		t.Fatalf("attempt took %v: it waited for go-redis's read timeout", took)
	}
	resume(t, r, 0, 1, 2)
	eventually(t, 30*time.Second, "no key left", func() bool { return countNonEmpty(r.values(t, "defaults")) == 0 })
}
