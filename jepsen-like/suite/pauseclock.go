package suite

import (
	"runtime"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// attemptRun is the function of redlock whose clock reading checks the
// validity left once an attempt's rounds are done (redlock/lock.go).
const attemptRun = "github.com/quorumlock/quorumlock/redlock.(*attempt).run"

// pauseClock is the clock of one slot's processes: the system clock, which
// the acquire-pause nemesis can make stop a process in the middle of an
// acquisition, after its rounds and before it reads the clock to check what
// validity is left (as a GC pause or SIGSTOP would at that moment).
type pauseClock struct {
	redlock.SystemClock

	mu     sync.Mutex
	armed  bool
	paused chan struct{} // closed when a process stopped
	resume chan struct{} // closed to let it go on
}

var _ redlock.Clock = (*pauseClock)(nil)

// Now returns time.Now(), after a pause when armed and called from
// redlock's attempt once its rounds are done.
func (c *pauseClock) Now() time.Time {
	c.mu.Lock()
	armed := c.armed
	c.mu.Unlock()
	if armed && calledFrom(attemptRun) {
		c.mu.Lock()
		resume := c.resume
		if c.armed {
			c.armed = false
			close(c.paused)
		} else {
			resume = nil
		}
		c.mu.Unlock()
		if resume != nil {
			<-resume
		}
	}
	return time.Now()
}

func calledFrom(fn string) bool {
	pc, _, _, ok := runtime.Caller(2)
	if !ok {
		return false
	}
	f := runtime.FuncForPC(pc)
	return f != nil && f.Name() == fn
}

// arm makes the next acquisition of the slot stop after its rounds: paused
// is closed once a process stopped; resume lets it go on (and disarms the
// clock if none stopped yet).
func (c *pauseClock) arm() (paused <-chan struct{}, resume func()) {
	c.mu.Lock()
	defer c.mu.Unlock()
	p, r := make(chan struct{}), make(chan struct{})
	c.armed, c.paused, c.resume = true, p, r
	return p, sync.OnceFunc(func() {
		c.mu.Lock()
		c.armed = false
		c.mu.Unlock()
		close(r)
	})
}
