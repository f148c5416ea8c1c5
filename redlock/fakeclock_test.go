package redlock

import (
	"sync"
	"time"
)

// fakeClock is a Clock that moves only when told, or by step on every Now.
type fakeClock struct {
	mu   sync.Mutex
	now  time.Time
	step time.Duration
}

func newFakeClock() *fakeClock { return &fakeClock{now: time.Unix(1_700_000_000, 0)} }

func (f *fakeClock) Now() time.Time {
	f.mu.Lock()
	defer f.mu.Unlock()
	t := f.now
	f.now = f.now.Add(f.step)
	return t
}

func (f *fakeClock) Advance(d time.Duration) {
	f.mu.Lock()
	f.now = f.now.Add(d)
	f.mu.Unlock()
}

// NewTimer returns real timers: rounds in these tests end by answers, and a
// lease's expiry watcher is not what they check.
func (f *fakeClock) NewTimer(d time.Duration) Timer { return SystemClock{}.NewTimer(d) }
