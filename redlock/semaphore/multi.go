package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// maxSurveysInFlight bounds the surveys still waiting on one master: a
// stalled master cannot collect an unbounded number of goroutines.
const maxSurveysInFlight = 256

// slots is the Atomic semaphore on several independent masters: limit
// independent slots, slot i being the Redlock lock slotKey(name, i)
// taken with a redlock.Client over the masters. A permit is a slot's lease,
// so each slot keeps Redlock's guarantees: at most one valid lease (hence at
// most limit permits), tolerance of a minority of failed masters, restart
// quarantine, and a fencing token per slot.
//
// An attempt is at most two steps. The survey (one script per master, in
// parallel) lists the slot keys absent on each master; a slot absent on a
// majority of all masters is a candidate. With no candidate the semaphore is
// full: ErrBusy after one round trip. Otherwise one candidate, picked at
// random among those no other attempt of the same Semaphore is taking, is
// locked with redlock's TryLock (SET NX on every master, then the
// fencing write-back); if that fails because the slot is held, ErrBusy after
// the second. The proof is in docs/semaphores.md.
type slots struct {
	s        *Semaphore
	rdbs     []redis.UniversalClient
	locks    *redlock.Client
	keys     []string
	quorum   int
	suspect  []atomic.Bool   // let a survey time out; cleared when it answers
	inflight []chan struct{} // surveys waiting per master

	mu      sync.Mutex
	claimed map[int]bool // slots this Semaphore is locking or holds now

	smu     sync.Mutex
	queued  *surveyRound // the round that starts when the running one ends
	running bool         // a survey round is under way
}

// surveyRound is one survey shared by every caller that joined it.
type surveyRound struct {
	done     chan struct{}
	free     []int // read-only once done is closed
	answered int
	errs     error
}

func newSlots(s *Semaphore, masters []redis.UniversalClient) (*slots, error) {
	opts := append([]redlock.Option{redlock.WithClock(s.cfg.clock)}, s.cfg.lockOpts...)
	locks, err := redlock.New(masters, opts...)
	if err != nil {
		return nil, err
	}
	sl := &slots{
		s: s, rdbs: masters, locks: locks, quorum: locks.Quorum(),
		suspect:  make([]atomic.Bool, len(masters)),
		inflight: make([]chan struct{}, len(masters)),
		claimed:  make(map[int]bool),
	}
	for i := range s.limit {
		sl.keys = append(sl.keys, slotKey(s.name, i))
	}
	for i := range sl.inflight {
		sl.inflight[i] = make(chan struct{}, maxSurveysInFlight)
	}
	return sl, nil
}

func (sl *slots) channels() []string {
	out := make([]string, len(sl.keys))
	for i, k := range sl.keys {
		out[i] = redlock.ChannelPrefix + k
	}
	return out
}

type surveyAnswer struct {
	master int
	free   []int64
	err    error
}

// survey returns, per slot, on how many masters it is free, and how many
// masters answered. Concurrent callers share rounds: a caller joins the
// round that starts after the one under way (so what it learns is never
// older than its call), and one round at a time runs per Semaphore.
func (sl *slots) survey(ctx context.Context) (free []int, answered int, errs error) {
	sl.smu.Lock()
	r := sl.queued
	if r == nil {
		r = &surveyRound{done: make(chan struct{})}
		sl.queued = r
	}
	if !sl.running {
		sl.running, sl.queued = true, nil
		if !sl.s.goBackground(func() { sl.runRounds(r) }) {
			sl.running = false
			r.errs = ErrClosed
			close(r.done)
		}
	}
	sl.smu.Unlock()
	select {
	case <-r.done:
		return r.free, r.answered, r.errs
	case <-ctx.Done():
		return nil, 0, ctx.Err()
	}
}

// runRounds runs r, then every round queued meanwhile, until none is.
func (sl *slots) runRounds(r *surveyRound) {
	for r != nil {
		r.free, r.answered, r.errs = sl.surveyOnce()
		close(r.done)
		sl.smu.Lock()
		r, sl.queued = sl.queued, nil
		if r == nil {
			sl.running = false
		}
		sl.smu.Unlock()
	}
}

// surveyOnce asks every master which slot keys it lacks. It waits for
// every master that is not suspect, at most the per-master timeout.
func (sl *slots) surveyOnce() (free []int, answered int, errs error) {
	ctx := context.Background()
	timeout := sl.s.masterTimeout()
	replies := make(chan surveyAnswer, len(sl.rdbs))
	pending := make(map[int]bool, len(sl.rdbs))
	for i, rdb := range sl.rdbs {
		select {
		case sl.inflight[i] <- struct{}{}:
		default:
			errs = errors.Join(errs, fmt.Errorf("master %d: %w", i, redlock.ErrMasterBusy))
			continue
		}
		started := sl.s.goBackground(func() {
			defer func() { <-sl.inflight[i] }()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			v, err := freeScript.Run(cctx, rdb, sl.keys).Int64Slice()
			cancel()
			if err == nil {
				sl.suspect[i].Store(false) // it answers again, even if too late for this round
			}
			replies <- surveyAnswer{master: i, free: v, err: err}
		})
		if !started {
			<-sl.inflight[i]
			return nil, 0, ErrClosed
		}
		pending[i] = true
	}
	waiting := func() bool { // a master not suspect has not answered
		for i := range pending {
			if !sl.suspect[i].Load() {
				return true
			}
		}
		return false
	}
	free = make([]int, len(sl.keys))
	timer := sl.s.cfg.clock.NewTimer(timeout)
	defer timer.Stop()
	for len(pending) > 0 && (waiting() || answered < sl.quorum) {
		select {
		case rep := <-replies:
			delete(pending, rep.master)
			if rep.err != nil {
				errs = errors.Join(errs, fmt.Errorf("master %d: %w", rep.master, rep.err))
				continue
			}
			answered++
			for _, f := range rep.free {
				if f >= 0 && int(f) < len(free) {
					free[f]++
				}
			}
		case <-timer.C():
			for i := range pending {
				sl.suspect[i].Store(true)
				errs = errors.Join(errs, fmt.Errorf("master %d: %w", i, redlock.ErrMasterTimeout))
			}
			return free, answered, errs
		case <-sl.s.closing():
			return free, answered, errors.Join(errs, ErrClosed)
		}
	}
	return free, answered, errs
}

func (sl *slots) tryAcquire(ctx context.Context) (*Permit, error) {
	s := sl.s
	free, answered, errs := sl.survey(ctx)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, err)
	}
	if errors.Is(errs, ErrClosed) {
		return nil, ErrClosed
	}
	if answered < sl.quorum {
		return nil, fmt.Errorf("semaphore %q: survey: %w (%d of %d needed): %w", s.name, redlock.ErrNoQuorum, answered, sl.quorum, errs)
	}
	var cands []int
	for i, n := range free {
		if n >= sl.quorum {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, busy("all %d slots are held on a majority of the masters", s.limit))
	}
	slot, ok := sl.claim(cands)
	if !ok {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, contended("the %d free slots are being taken by this Semaphore's other attempts", len(cands)))
	}
	s.hook()
	lease, err := sl.locks.TryLock(ctx, sl.keys[slot], s.cfg.timeout)
	if err != nil {
		sl.unclaim(slot)
		switch {
		case ctx.Err() != nil, errors.Is(err, redlock.ErrNoQuorum), errors.Is(err, redlock.ErrTokensExhausted),
			!errors.Is(err, redlock.ErrNotAcquired):
			return nil, fmt.Errorf("semaphore %q: slot %d: %w", s.name, slot, err)
		}
		return nil, fmt.Errorf("semaphore %q: %w: %w", s.name, contended("slot %d, free when surveyed, was taken by a concurrent acquirer", slot), err)
	}
	s.cfg.logger.Debug("semaphore: acquired", "name", s.name, "slot", slot, "token", uint64(lease.Token()))
	context.AfterFunc(lease.Context(), func() { sl.unclaim(slot) })
	return newSlotPermit(s, slot, lease), nil
}

// claim picks a candidate at random among the slots this Semaphore is
// neither locking nor holding (a survey that started before one of its own
// acquisitions still shows that slot free), and marks it until the attempt
// fails or the permit ends; false when there is none.
func (sl *slots) claim(cands []int) (int, bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	var free []int
	for _, c := range cands {
		if !sl.claimed[c] {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return 0, false
	}
	slot := free[rand.IntN(len(free))]
	sl.claimed[slot] = true
	return slot, true
}

func (sl *slots) unclaim(slot int) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	delete(sl.claimed, slot)
}

// holders counts the slots not free on a majority of the masters that
// answered: exactly the slots a TryAcquire now would not try.
func (sl *slots) holders(ctx context.Context) (int, error) {
	free, answered, errs := sl.survey(ctx)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if answered < sl.quorum {
		return 0, fmt.Errorf("semaphore %q: holders: %w (%d of %d needed): %w", sl.s.name, redlock.ErrNoQuorum, answered, sl.quorum, errs)
	}
	n := 0
	for _, f := range free {
		if f < sl.quorum {
			n++
		}
	}
	return n, nil
}

func (sl *slots) close() error { return sl.locks.Close() }
