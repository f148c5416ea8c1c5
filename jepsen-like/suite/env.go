package suite

import (
	"context"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/jepsen-like/netproxy"
)

// slot is one client position: its proxies (one per master) outlive the
// processes that come and go in it.
type slot struct {
	proxies []*netproxy.Proxy
	clock   *pauseClock // of every process of the slot

	mu     sync.Mutex
	cut    map[int]int // master → number of faults cutting it
	leave  context.CancelFunc
	crash  func()            // closes the current process's connections at once
	quiet  []<-chan struct{} // the next process starts when these are closed
	joined int               // processes so far
}

// env implements nemesis.Env for a run.
type env struct {
	b     backend.Backend
	rec   *history.Recorder
	slots []*slot

	mu        sync.Mutex
	waiter    *holdWaiter
	gate      chan struct{} // closed by Ungate
	candidate int
	armed     chan struct{} // closed by Armed: a SlowExtend holder goes on
	ttls      leaseTTLs     // restart-long's long leases
}

type holdWaiter struct {
	since int64 // only acquisitions invoked after this count
	mode  nemesis.HoldMode
	got   chan int
	ended chan struct{}
}

var _ nemesis.Env = (*env)(nil)

func (e *env) Backend() backend.Backend { return e.b }

func (e *env) SetCut(s int, masters []int, blocked bool) {
	sl := e.slots[s]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	for _, m := range masters {
		if blocked {
			sl.cut[m]++
		} else if sl.cut[m] > 0 {
			sl.cut[m]--
		}
		sl.proxies[m].SetBlocked(sl.cut[m] > 0)
	}
}

func (e *env) SetRefused(s int, masters []int, refused bool) {
	for _, m := range masters {
		e.slots[s].proxies[m].SetRefused(refused)
	}
}

func (e *env) SetReplyDelay(s int, masters []int, d time.Duration) {
	for _, m := range masters {
		e.slots[s].proxies[m].SetReplyDelay(d)
	}
}

func (e *env) ResetMaster(i int) {
	for _, sl := range e.slots {
		sl.proxies[i].Reset()
	}
}

func (e *env) AwaitHold(ctx context.Context, mode nemesis.HoldMode, settle time.Duration) (int, <-chan struct{}, bool) {
	w := &holdWaiter{since: e.rec.Now() + int64(settle), mode: mode, got: make(chan int, 1), ended: make(chan struct{})}
	e.mu.Lock()
	e.waiter = w
	e.mu.Unlock()
	select {
	case s := <-w.got:
		return s, w.ended, true
	case <-ctx.Done():
		e.mu.Lock()
		defer e.mu.Unlock()
		if e.waiter == w {
			e.waiter = nil
			return 0, nil, false
		}
		// taken at the last moment
		return <-w.got, w.ended, true
	}
}

// OnHold hands the hold to a waiting nemesis, if any.
func (e *env) OnHold(s int, invokedNS int64) (nemesis.HoldMode, bool, func()) {
	e.mu.Lock()
	w := e.waiter
	if w == nil || invokedNS <= w.since {
		e.mu.Unlock()
		return 0, false, func() {}
	}
	e.waiter = nil
	armed := make(chan struct{})
	if w.mode == nemesis.SlowExtend {
		e.armed = armed
	}
	e.mu.Unlock()
	w.got <- s
	if w.mode == nemesis.SlowExtend {
		<-armed // the nemesis arms it at once: nothing to wait for but SetReplyDelay
	}
	return w.mode, true, func() { close(w.ended) }
}

// PauseAcquisition arms the clock of slot s.
func (e *env) PauseAcquisition(s int) (<-chan struct{}, func()) { return e.slots[s].clock.arm() }

// Armed lets the SlowExtend holder go on.
func (e *env) Armed() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.armed != nil {
		close(e.armed)
		e.armed = nil
	}
}

func (e *env) Gate(candidate int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gate == nil {
		e.gate = make(chan struct{})
	}
	e.candidate = candidate
}

func (e *env) Ungate() {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.gate != nil {
		close(e.gate)
		e.gate = nil
	}
}

// BeforeAcquire waits while a gate keeps slot s out.
func (e *env) BeforeAcquire(ctx context.Context, s int) {
	for {
		e.mu.Lock()
		gate, candidate := e.gate, e.candidate
		e.mu.Unlock()
		if gate == nil || candidate == s {
			return
		}
		select {
		case <-gate:
		case <-ctx.Done():
			return
		}
	}
}

func (e *env) Rejoin(_ context.Context, except int, start, quiet <-chan struct{}) {
	challenger := true
	for i, sl := range e.slots {
		if i == except {
			continue
		}
		sl.mu.Lock()
		sl.quiet = []<-chan struct{}{start}
		if !challenger {
			sl.quiet = append(sl.quiet, quiet)
		}
		challenger = false
		if sl.leave != nil {
			sl.leave()
		}
		if sl.crash != nil {
			sl.crash() // nothing it queued can reach a master from now on
		}
		sl.mu.Unlock()
	}
}
