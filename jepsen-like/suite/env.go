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
	unkept chan struct{}     // non-nil while kept (Keep); closed when let go
	// accompanied sends the slot's acquisitions merged with companions
	// (SetCompany); company are the current process's hooks for it, one
	// per master.
	accompanied bool
	company     []*companyHook
}

// live ends a process of the slot (leave) once life has passed and the slot
// is not kept, or when ctx ends; it returns at once.
func (sl *slot) live(ctx context.Context, life time.Duration, leave context.CancelFunc) {
	go func() {
		t := time.NewTimer(life)
		defer t.Stop()
		select {
		case <-ctx.Done():
			return
		case <-t.C:
		}
		for {
			sl.mu.Lock()
			unkept := sl.unkept
			sl.mu.Unlock()
			if unkept == nil {
				leave()
				return
			}
			select {
			case <-ctx.Done():
				return
			case <-unkept:
			}
		}
	}()
}

// env implements nemesis.Env for a run.
type env struct {
	b     backend.Backend
	rec   *history.Recorder
	slots []*slot

	mu        sync.Mutex
	waiter    *holdWaiter
	gated     bool // only candidate starts acquisitions (Gate)
	candidate int
	benched   map[int]bool  // slots that start no acquisition (Bench)
	busy      map[int]bool  // slots between an acquisition's start and its cycle's end
	changed   chan struct{} // closed and replaced when gated, benched or busy change
	armed     chan struct{} // closed by Armed: a SlowExtend holder goes on
	ttls      leaseTTLs     // restart-long's long leases
}

func newEnv(b backend.Backend, rec *history.Recorder) *env {
	return &env{b: b, rec: rec, benched: make(map[int]bool), busy: make(map[int]bool), changed: make(chan struct{})}
}

// broadcast wakes every waiter on e.changed; e.mu is held.
func (e *env) broadcast() {
	close(e.changed)
	e.changed = make(chan struct{})
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
	return e.awaitHold(ctx, e.waitFor(mode, settle))
}

// AwaitUnbench puts the hold waiter in place, then unbenches s.
func (e *env) AwaitUnbench(ctx context.Context, s int, mode nemesis.HoldMode) (int, <-chan struct{}, bool) {
	w := e.waitFor(mode, 0)
	e.Bench(s, false)
	return e.awaitHold(ctx, w)
}

// waitFor puts a hold waiter in place.
func (e *env) waitFor(mode nemesis.HoldMode, settle time.Duration) *holdWaiter {
	w := &holdWaiter{since: e.rec.Now() + int64(settle), mode: mode, got: make(chan int, 1), ended: make(chan struct{})}
	e.mu.Lock()
	e.waiter = w
	e.mu.Unlock()
	return w
}

func (e *env) awaitHold(ctx context.Context, w *holdWaiter) (int, <-chan struct{}, bool) {
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
	e.gated, e.candidate = true, candidate
	e.broadcast()
}

func (e *env) Ungate() {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.gated = false
	e.broadcast()
}

func (e *env) Bench(s int, benched bool) {
	e.mu.Lock()
	defer e.mu.Unlock()
	e.benched[s] = benched
	e.broadcast()
}

func (e *env) AwaitIdle(ctx context.Context, except int) bool {
	for {
		e.mu.Lock()
		idle := true
		for s, b := range e.busy {
			idle = idle && (!b || s == except)
		}
		changed := e.changed
		e.mu.Unlock()
		if idle {
			return true
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return false
		}
	}
}

// Process is the id of the process slot s runs now (-1 before its first).
func (e *env) Process(s int) int {
	sl := e.slots[s]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.joined == 0 {
		return -1
	}
	return s + (sl.joined-1)*len(e.slots)
}

func (e *env) Keep(s int, kept bool) {
	sl := e.slots[s]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	switch {
	case kept && sl.unkept == nil:
		sl.unkept = make(chan struct{})
	case !kept && sl.unkept != nil:
		close(sl.unkept)
		sl.unkept = nil
	}
}

// BeforeAcquire waits while a gate or the bench keeps slot s out; then s
// is busy until AfterCycle.
func (e *env) BeforeAcquire(ctx context.Context, s int) {
	for {
		e.mu.Lock()
		if !e.benched[s] && (!e.gated || e.candidate == s) {
			e.busy[s] = true
			e.broadcast()
			e.mu.Unlock()
			return
		}
		changed := e.changed
		e.mu.Unlock()
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// AfterCycle marks s idle: its cycle (acquisition, hold, release) is over.
func (e *env) AfterCycle(s int) {
	e.mu.Lock()
	defer e.mu.Unlock()
	if e.busy[s] {
		e.busy[s] = false
		e.broadcast()
	}
}

func (e *env) Rejoin(_ context.Context, except int, start, quiet <-chan struct{}) {
	challenger := true
	for i, sl := range e.slots {
		if i == except {
			continue
		}
		sl.mu.Lock()
		if sl.unkept != nil { // a long-lived process lives on
			sl.mu.Unlock()
			continue
		}
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
