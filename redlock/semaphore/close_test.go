package semaphore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Close keeps the permits already handed out, as documented, for every
// variant and on several masters: after Close a permit is still held (Err,
// Done, ValidUntil unchanged), Refresh and Release work, and its place is
// free at once after Release. An auto-refreshed permit is no longer
// refreshed after Close and ends when its validity runs out.
func TestCloseKeepsPermits(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			ctx := ctxFor(t, 20*time.Second)
			s, err := New(m, "close", 2, WithVariant(tc.variant), WithLockOptions(redlock.WithoutQuarantine()))
			if err != nil {
				t.Fatal(err)
			}
			p, err := s.TryAcquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			until := p.ValidUntil()
			if err := s.Close(); err != nil {
				t.Fatal(err)
			}
			if err := p.Err(); err != nil {
				t.Fatalf("Err after Close: %v; want nil (the permit keeps its validity)", err)
			}
			select {
			case <-p.Done():
				t.Fatalf("Done closed by Close: %v", context.Cause(p.Context()))
			default:
			}
			if !p.ValidUntil().Equal(until) {
				t.Fatalf("ValidUntil moved from %v to %v by Close", until, p.ValidUntil())
			}
			if err := p.Refresh(ctx); err != nil {
				t.Fatalf("Refresh after Close: %v", err)
			}
			if err := p.Release(ctx); err != nil {
				t.Fatalf("Release after Close: %v", err)
			}
			if _, err := s.TryAcquire(ctx); !errors.Is(err, ErrClosed) {
				t.Fatalf("TryAcquire after Close: %v; want ErrClosed", err)
			}
			other := newSem(t, m, "close", 2, WithVariant(tc.variant))
			releaseAll(t, mustAcquire(t, other, 2)) // both places free at once

			auto, err := New(m, "close-auto", 1, WithVariant(tc.variant), WithTimeout(600*time.Millisecond),
				WithAutoRefresh(), WithLockOptions(redlock.WithoutQuarantine()))
			if err != nil {
				t.Fatal(err)
			}
			q, err := auto.TryAcquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			if err := auto.Close(); err != nil {
				t.Fatal(err)
			}
			select {
			case <-q.Done():
			case <-time.After(5 * time.Second):
				t.Fatal("an auto-refreshed permit outlived its validity after Close")
			}
			if !errors.Is(context.Cause(q.Context()), ErrLost) || !q.ValidUntil().Before(time.Now()) {
				t.Fatalf("after Close the permit ended with %v at %v; want ErrLost at its validity's end", context.Cause(q.Context()), q.ValidUntil())
			}
		})
	}
}

// Detach ends a permit in this process and leaves its place held on the
// masters (for another process to refresh or release, as redlockctl's
// handles do): Done closes with ErrDetached, Refresh and Release return
// ErrDetached without touching the masters, and Close then leaves nothing
// running (goleak checks at the end of the package).
func TestDetachKeepsThePlace(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			ctx := ctxFor(t, 20*time.Second)
			s, err := New(m, "detach", 1, WithVariant(tc.variant), WithLockOptions(redlock.WithoutQuarantine()))
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			p, err := s.TryAcquire(ctx)
			if err != nil {
				t.Fatal(err)
			}
			p.Detach()
			select {
			case <-p.Done():
			default:
				t.Fatal("Done open after Detach")
			}
			if c := context.Cause(p.Context()); !errors.Is(c, ErrDetached) || !errors.Is(p.Err(), ErrDetached) {
				t.Fatalf("after Detach: cause %v, Err %v; want ErrDetached", c, p.Err())
			}
			if err := p.Refresh(ctx); !errors.Is(err, ErrDetached) {
				t.Fatalf("Refresh after Detach: %v; want ErrDetached", err)
			}
			if err := p.Release(ctx); !errors.Is(err, ErrDetached) {
				t.Fatalf("Release after Detach: %v; want ErrDetached", err)
			}
			other := newSem(t, m, "detach", 1, WithVariant(tc.variant))
			if _, err := other.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("TryAcquire while the detached permit's place is held: %v; want ErrBusy", err)
			}
			if n, err := other.Holders(ctx); err != nil || n != 1 {
				t.Fatalf("Holders = %d, %v; want the detached place", n, err)
			}
		})
	}
}
