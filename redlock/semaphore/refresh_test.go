package semaphore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A streaming-style holder on a real master: with a 1 s timeout, a holder
// refreshing every third of it keeps its permit for 10 s (10× the timeout);
// one that stops refreshing loses it, and its next Refresh says so. (The
// timeout is short to keep the test quick, and not shorter so that a
// refresh a loaded 2-core CI machine delays by a few hundred milliseconds
// is still in time.)
func TestStreamingHolder(t *testing.T) {
	const timeout = time.Second
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, m := realMasters(t, tc.masters)
			s := newSem(t, m, "stream", 1, WithVariant(tc.variant), WithTimeout(timeout))
			other := newSem(t, m, "stream", 1, WithVariant(tc.variant), WithTimeout(timeout))
			p := mustAcquire(t, s, 1)[0]
			defer func() { _ = p.Release(context.Background()) }()

			tick := time.NewTicker(timeout / 3)
			defer tick.Stop()
			end := time.Now().Add(10 * timeout)
			slow := 0
			for time.Now().Before(end) {
				<-tick.C
				// A refresh that got no answer in time (a busy machine: the
				// per-master timeout is 100 ms here) is not a loss; try once
				// more at once, as auto-refresh would.
				err := p.Refresh(ctxFor(t, 5*time.Second))
				if err != nil && !errors.Is(err, ErrLost) {
					slow++
					err = p.Refresh(ctxFor(t, 5*time.Second))
				}
				if errors.Is(err, ErrLost) {
					t.Fatalf("permit lost while refreshed every %v: %v", timeout/3, err)
				}
				if q, err := other.TryAcquire(ctxFor(t, 5*time.Second)); err == nil {
					_ = q.Release(context.Background())
					t.Fatal("another client got the streaming slot")
				}
			}
			select {
			case <-p.Done():
				t.Fatalf("permit ended while refreshed: %v", context.Cause(p.Context()))
			default:
			}
			if slow > 0 {
				t.Logf("%d refreshes got no answer in time and were retried", slow)
			}

			// Stop refreshing: the permit ends within its timeout.
			select {
			case <-p.Done():
			case <-time.After(5 * timeout):
				t.Fatal("Done not closed after the permit timed out")
			}
			if c := context.Cause(p.Context()); !errors.Is(c, ErrLost) {
				t.Fatalf("cause %v, want ErrLost", c)
			}
			err := p.Refresh(ctxFor(t, 5*time.Second))
			if !errors.Is(err, ErrLost) || !errors.Is(err, redlock.ErrLockLost) {
				t.Fatalf("Refresh after the timeout: %v, want ErrLost", err)
			}
			// The place is free again for others (once the master lets go:
			// at most one timeout later).
			q, err := other.Acquire(ctxFor(t, 10*timeout))
			if err != nil {
				t.Fatalf("the lost place was not freed: %v", err)
			}
			if err := p.Release(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrLost) {
				t.Fatalf("Release of the lost permit: %v, want ErrLost", err)
			}
			if err := q.Release(ctxFor(t, 5*time.Second)); err != nil {
				t.Fatalf("Release of the new holder (the old one must not have removed it): %v", err)
			}
		})
	}
}

// WithAutoRefresh keeps a permit with no Refresh calls; Release ends it.
func TestAutoRefresh(t *testing.T) {
	const timeout = 600 * time.Millisecond
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			t.Parallel()
			_, m := realMasters(t, tc.masters)
			s := newSem(t, m, "auto", 1, WithVariant(tc.variant), WithTimeout(timeout), WithAutoRefresh())
			p := mustAcquire(t, s, 1)[0]
			select {
			case <-p.Done():
				t.Fatalf("auto-refreshed permit ended: %v", context.Cause(p.Context()))
			case <-time.After(5 * timeout):
			}
			if n, err := s.Holders(ctxFor(t, 5*time.Second)); err != nil || n != 1 {
				t.Fatalf("Holders = %d, %v; want 1", n, err)
			}
			if err := p.Release(ctxFor(t, 5*time.Second)); err != nil {
				t.Fatalf("Release: %v", err)
			}
			if c := context.Cause(p.Context()); !errors.Is(c, ErrReleased) {
				t.Fatalf("cause after Release: %v", c)
			}
		})
	}
}
