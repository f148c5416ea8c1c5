package redlock

import (
	"context"
	"errors"
	"testing"
	"time"
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
	refused := func() attemptInfo {
		t.Helper()
		var info attemptInfo
		_, err := c.attempt(ctx, "k", 10*time.Second, lockConfig{}, &info)
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
			n, err := rc.PubSubNumSub(ctx, ChannelPrefix+"k").Result()
			if err != nil || n[ChannelPrefix+"k"] != 2 {
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
