package redlock

import "time"

// Clock is the time source of a Client. Validity is computed from Now
// differences, so a real clock must carry Go's monotonic reading (time.Now
// does). Tests inject a fake.
type Clock interface {
	Now() time.Time
	// NewTimer returns a timer that fires once after d.
	NewTimer(d time.Duration) Timer
}

// Timer is the part of *time.Timer a Clock hands out.
type Timer interface {
	C() <-chan time.Time
	// Reset re-arms the timer to fire after d; the caller has drained C or
	// stopped it first.
	Reset(d time.Duration)
	Stop() bool
}

// SystemClock is the real clock: time.Now and time.NewTimer.
type SystemClock struct{}

// Now returns time.Now().
func (SystemClock) Now() time.Time { return time.Now() }

// NewTimer returns a real timer.
func (SystemClock) NewTimer(d time.Duration) Timer { return realTimer{time.NewTimer(d)} }

type realTimer struct{ t *time.Timer }

func (r realTimer) C() <-chan time.Time   { return r.t.C }
func (r realTimer) Reset(d time.Duration) { r.t.Reset(d) }
func (r realTimer) Stop() bool            { return r.t.Stop() }
