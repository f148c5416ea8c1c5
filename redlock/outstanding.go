package redlock

import (
	"sync"
	"time"
)

// outstanding counts the deletes of released leases still on their way to
// a master (Release returns at a quorum; the last masters' deletes follow),
// so that Close can send them before it stops the batchers: a program that
// releases, closes and exits leaves no key behind on the slower masters.
// Tracking a delete allocates nothing: the channel Close waits on is made
// only when Close finds deletes outstanding.
type outstanding struct {
	mu   sync.Mutex
	n    int
	idle chan struct{} // made by wait, closed when n falls back to 0
	// answered is done, made once, for each tracked call to run.
	answered func()
}

func newOutstanding() *outstanding {
	o := &outstanding{}
	o.answered = o.done
	return o
}

// track counts cl until it is answered; a call answered already is not
// counted.
func (o *outstanding) track(cl *call[int64]) {
	o.mu.Lock()
	o.n++
	o.mu.Unlock()
	if !cl.onAnswer(&o.answered) {
		o.done()
	}
}

func (o *outstanding) done() {
	o.mu.Lock()
	defer o.mu.Unlock()
	if o.n--; o.n == 0 && o.idle != nil {
		close(o.idle)
		o.idle = nil
	}
}

// wait returns once nothing is outstanding, or after d (real time: it bounds
// Close), and reports whether nothing was.
func (o *outstanding) wait(d time.Duration) bool {
	o.mu.Lock()
	if o.n == 0 {
		o.mu.Unlock()
		return true
	}
	if o.idle == nil {
		o.idle = make(chan struct{})
	}
	idle := o.idle
	o.mu.Unlock()
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-idle:
		return true
	case <-t.C:
		return false
	}
}
