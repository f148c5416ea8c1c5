package semaphore

import (
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// fakeClock is a manual redlock.Clock: timers fire only in Advance.
type fakeClock struct {
	mu     sync.Mutex
	now    time.Time
	timers []*fakeTimer
}

type fakeTimer struct {
	c      *fakeClock
	ch     chan time.Time
	at     time.Time
	active bool
}

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	return f.now
}

func (f *fakeClock) NewTimer(d time.Duration) redlock.Timer {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := &fakeTimer{c: f, ch: make(chan time.Time, 1), at: f.now.Add(d), active: true}
	f.timers = append(f.timers, t)
	return t
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.now = f.now.Add(d)
	for _, t := range f.timers {
		if t.active && !t.at.After(f.now) {
			t.active = false
			select {
			case t.ch <- f.now:
			default:
			}
		}
	}
}

// timer returns the i-th timer made, and whether it is armed for at.
func (f *fakeClock) timer(i int) (at time.Time, active, ok bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if i >= len(f.timers) {
		return time.Time{}, false, false
	}
	t := f.timers[i]
	return t.at, t.active, true
}

func (t *fakeTimer) C() <-chan time.Time { return t.ch }

func (t *fakeTimer) Reset(d time.Duration) {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	t.at, t.active = t.c.now.Add(d), true
}

func (t *fakeTimer) Stop() bool {
	t.c.mu.Lock()
	defer t.c.mu.Unlock()
	was := t.active
	t.active = false
	return was
}

// waitFor polls cond (real time) until it holds.
func waitFor(t *testing.T, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("timed out waiting for %s", what)
		}
		time.Sleep(time.Millisecond)
	}
}

// An auto-refresh that gets an error is retried a quarter interval later
// while the permit is valid; the permit then outlives its first validity.
// Basic scores with the fake clock (WithNow), so nothing here depends on
// real time.
func TestAutoRefreshRetriesFailedRefresh(t *testing.T) {
	mr, m := miniMaster(t)
	clk := &fakeClock{now: time.Unix(1_700_000_000, 0)}
	t0 := clk.Now()
	const timeout = 300 * time.Millisecond
	validity := timeout - drift(timeout) // 295 ms
	s := newSem(t, m, "retry", 1, WithVariant(Basic), WithTimeout(timeout), WithAutoRefresh(),
		WithClock(clk), WithNow(clk.Now))
	p := mustAcquire(t, s, 1)[0]
	defer releaseAll(t, []*Permit{p})
	// The watcher's timers: 0 the expiry, 1 the refresh.
	waitFor(t, "the watcher's timers", func() bool { _, _, ok := clk.timer(1); return ok })

	mr.SetError("ERR injected")
	clk.Advance(timeout / 3) // the refresh fails...
	waitFor(t, "the retry to be armed", func() bool {
		at, active, _ := clk.timer(1)
		return active && at.Equal(t0.Add(timeout/3+timeout/12))
	})
	mr.SetError("")
	clk.Advance(timeout / 12) // ...and is retried, and succeeds
	renewed := t0.Add(timeout/3 + timeout/12 + validity)
	waitFor(t, "the expiry to move", func() bool {
		at, active, _ := clk.timer(0)
		return active && at.Equal(renewed) && p.ValidUntil().Equal(renewed)
	})
	clk.Advance(validity - timeout/3 - timeout/12 + 5*time.Millisecond) // past the first validity
	if err := p.Err(); err != nil {
		t.Fatalf("permit lost although the retried refresh succeeded: %v", err)
	}
	select {
	case <-p.Done():
		t.Fatal("Done closed")
	default:
	}
}
