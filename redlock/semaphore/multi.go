package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"sync"
	"sync/atomic"

	layout "github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/refusal"

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
	s          *Semaphore
	rdbs       []redis.UniversalClient
	locks      *redlock.Client
	keys       []string // the slot keys
	surveyKeys []string // the slot keys and the limit key
	quorum     int
	suspect    []atomic.Bool   // let a survey time out; cleared when it answers
	inflight   []chan struct{} // surveys waiting per master

	mu      sync.Mutex
	claimed map[int]uint64 // slots this Semaphore is locking or holds now → claim id
	claims  uint64         // the last claim id handed out
	closing bool           // Close was called: locks closes once nothing is claimed
	closed  bool           // locks was closed

	smu     sync.Mutex
	queued  *surveyRound // the round that starts when the running one ends
	running bool         // a survey round is under way
}

// surveyRound is one survey shared by every caller that joined it.
type surveyRound struct {
	done chan struct{}
	surveyed
}

// surveyed is what a survey found; read-only once its round is done.
type surveyed struct {
	free     []int          // per slot, on how many masters it is free
	limits   map[string]int // per limit recorded, on how many masters
	answered int
	refused  int // masters that refused for good (refusal.ForGood)
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
		claimed:  make(map[int]uint64),
	}
	for i := range s.limit {
		sl.keys = append(sl.keys, slotKey(s.name, i))
	}
	sl.surveyKeys = append(slices.Clip(sl.keys), LimitKey(s.name))
	for i := range sl.inflight {
		sl.inflight[i] = make(chan struct{}, maxSurveysInFlight)
	}
	return sl, nil
}

func (sl *slots) channels() []string {
	out := make([]string, len(sl.keys))
	for i, k := range sl.keys {
		out[i] = layout.ChannelPrefix + k
	}
	return out
}

type surveyAnswer struct {
	master int
	limit  string
	free   []int64
	err    error
}

// survey returns, per slot, on how many masters it is free, the limits
// recorded on the masters, and how many masters answered. Concurrent
// callers share rounds: a caller joins the round that starts after the one
// under way (so what it learns is never older than its call), and one round
// at a time runs per Semaphore.
func (sl *slots) survey(ctx context.Context) surveyed {
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
		return r.surveyed
	case <-ctx.Done():
		return surveyed{errs: ctx.Err()}
	}
}

// runRounds runs r, then every round queued meanwhile, until none is.
func (sl *slots) runRounds(r *surveyRound) {
	for r != nil {
		r.surveyed = sl.surveyOnce()
		close(r.done)
		sl.smu.Lock()
		r, sl.queued = sl.queued, nil
		if r == nil {
			sl.running = false
		}
		sl.smu.Unlock()
	}
}

// surveyOnce asks every master which limit it records and which slot keys
// it lacks. It waits for every master that is not suspect, at most the
// per-master timeout.
func (sl *slots) surveyOnce() (res surveyed) {
	ctx := context.Background()
	keys := sl.surveyKeys
	res.free = make([]int, len(sl.keys))
	res.limits = make(map[string]int)
	timeout := sl.s.masterTimeout()
	replies := make(chan surveyAnswer, len(sl.rdbs))
	pending := make(map[int]bool, len(sl.rdbs))
	for i, rdb := range sl.rdbs {
		select {
		case sl.inflight[i] <- struct{}{}:
		default:
			res.errs = errors.Join(res.errs, fmt.Errorf("master %d: %w", i, redlock.ErrMasterBusy))
			continue
		}
		started := sl.s.goBackground(func() {
			defer func() { <-sl.inflight[i] }()
			cctx, cancel := context.WithTimeout(ctx, timeout)
			rep := surveyAnswer{master: i}
			v, err := freeScript.Run(cctx, rdb, keys, sl.s.limitArg()).Slice()
			cancel()
			if err == nil {
				sl.suspect[i].Store(false) // it answers again, even if too late for this round
				rep.limit, rep.free, err = parseSurvey(v)
			}
			rep.err = err
			replies <- rep
		})
		if !started {
			<-sl.inflight[i]
			return surveyed{errs: ErrClosed}
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
	timer := sl.s.cfg.clock.NewTimer(timeout)
	defer timer.Stop()
	for len(pending) > 0 && (waiting() || res.answered < sl.quorum) {
		select {
		case rep := <-replies:
			delete(pending, rep.master)
			if rep.err != nil {
				if refusal.ForGood(rep.err) {
					res.refused++
				}
				res.errs = errors.Join(res.errs, fmt.Errorf("master %d: %w", rep.master, rep.err))
				continue
			}
			res.answered++
			res.limits[rep.limit]++
			for _, f := range rep.free {
				if f >= 0 && int(f) < len(res.free) {
					res.free[f]++
				}
			}
		case <-timer.C():
			for i := range pending {
				sl.suspect[i].Store(true)
				res.errs = errors.Join(res.errs, fmt.Errorf("master %d: %w", i, redlock.ErrMasterTimeout))
			}
			return res
		case <-sl.s.closing():
			res.errs = errors.Join(res.errs, ErrClosed)
			return res
		}
	}
	return res
}

// parseSurvey reads free.lua's answer: the limit recorded, then the free
// slots.
func parseSurvey(v []any) (limit string, free []int64, err error) {
	if len(v) == 0 {
		return "", nil, errors.New("survey script returned nothing")
	}
	limit, ok := v[0].(string)
	if !ok {
		return "", nil, fmt.Errorf("survey script returned a %T for the limit", v[0])
	}
	for _, x := range v[1:] {
		n, ok := x.(int64)
		if !ok {
			return "", nil, fmt.Errorf("survey script returned a %T for a slot", x)
		}
		free = append(free, n)
	}
	return limit, free, nil
}

// check says whether a survey may be acted on: a majority answered, and a
// majority records the caller's limit. A limit once recorded on a master is
// never changed there, and any two majorities share a master, so clients
// with different limits are never both let through. When so many masters
// refused for good that no majority is possible, the error matches
// redlock.ErrMisconfigured as well as redlock.ErrNoQuorum.
func (sl *slots) check(op string, res surveyed) error {
	s := sl.s
	if res.answered < sl.quorum {
		if len(sl.rdbs)-res.refused < sl.quorum {
			return fmt.Errorf("semaphore %q: %s: %w: %w (%d of %d needed; %d refuse for good): %w", s.name, op, redlock.ErrMisconfigured,
				redlock.ErrNoQuorum, res.answered, sl.quorum, res.refused, res.errs)
		}
		return fmt.Errorf("semaphore %q: %s: %w (%d of %d needed): %w", s.name, op, redlock.ErrNoQuorum, res.answered, sl.quorum, res.errs)
	}
	if res.limits[s.limitArg()] >= sl.quorum {
		return nil
	}
	var others []string
	for l, n := range res.limits {
		if l != s.limitArg() {
			others = append(others, fmt.Sprintf("%s on %d of %d masters", l, n, len(sl.rdbs)))
		}
	}
	slices.Sort(others)
	return fmt.Errorf("semaphore %q: %s: %w", s.name, op, limitMismatch(s.name, s.limit, strings.Join(others, ", "),
		"to change it, end every permit, then DEL "+LimitKey(s.name)+" on every master"))
}

func (sl *slots) tryAcquire(ctx context.Context) (*Permit, error) {
	s := sl.s
	res := sl.survey(ctx)
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, err)
	}
	if errors.Is(res.errs, ErrClosed) {
		return nil, ErrClosed
	}
	if err := sl.check("survey", res); err != nil {
		return nil, err
	}
	var cands []int
	for i, n := range res.free {
		if n >= sl.quorum {
			cands = append(cands, i)
		}
	}
	if len(cands) == 0 {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, busy("all %d slots are held on a majority of the masters", s.limit))
	}
	slot, claim, ok, closing := sl.claim(cands)
	switch {
	case closing:
		return nil, ErrClosed
	case !ok:
		return nil, fmt.Errorf("semaphore %q: %w", s.name, contended("the %d free slots are being taken by this Semaphore's other attempts", len(cands)))
	}
	s.hook()
	lease, err := sl.locks.TryLock(ctx, sl.keys[slot], s.cfg.timeout)
	if err != nil {
		sl.unclaim(slot, claim)
		switch {
		case ctx.Err() != nil, errors.Is(err, redlock.ErrNoQuorum), errors.Is(err, redlock.ErrTokensExhausted),
			errors.Is(err, redlock.ErrMisconfigured), !errors.Is(err, redlock.ErrNotAcquired):
			return nil, s.slotErr("acquire", slot, false, err)
		}
		return nil, fmt.Errorf("semaphore %q: %w: %w", s.name, contended("slot %d, free when surveyed, was taken by a concurrent acquirer", slot), err)
	}
	sl.mu.Lock()
	closing = sl.closing
	sl.mu.Unlock()
	if closing {
		// Close came while the slot was being locked: nobody will get this
		// permit, so give the slot back at once (the client is still open:
		// the attempt counts as live).
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), s.masterTimeout())
		_ = lease.Release(rctx)
		cancel()
		sl.unclaim(slot, claim)
		return nil, ErrClosed
	}
	s.cfg.logger.Debug("semaphore: acquired", "name", s.name, "slot", slot, "token", uint64(lease.Token()))
	context.AfterFunc(lease.Context(), func() { sl.unclaim(slot, claim) })
	return newSlotPermit(s, slot, claim, lease), nil
}

// claim picks a candidate at random among the slots this Semaphore is
// neither locking nor holding (a survey that started before one of its own
// acquisitions still shows that slot free), and marks it until the attempt
// fails or the permit ends (or is detached); false when there is none,
// closing after Close. While a slot is claimed the redlock client stays open
// (see close).
func (sl *slots) claim(cands []int) (slot int, id uint64, ok, closing bool) {
	sl.mu.Lock()
	defer sl.mu.Unlock()
	if sl.closing {
		return 0, 0, false, true
	}
	var free []int
	for _, c := range cands {
		if _, taken := sl.claimed[c]; !taken {
			free = append(free, c)
		}
	}
	if len(free) == 0 {
		return 0, 0, false, false
	}
	slot = free[rand.IntN(len(free))]
	sl.claims++
	sl.claimed[slot] = sl.claims
	return slot, sl.claims, true, false
}

// unclaim ends claim id of slot (a later claim of the slot is left alone);
// after Close, the last claim to end closes the redlock client.
func (sl *slots) unclaim(slot int, id uint64) {
	sl.mu.Lock()
	if sl.claimed[slot] == id {
		delete(sl.claimed, slot)
	}
	last := sl.closing && len(sl.claimed) == 0 && !sl.closed
	if last {
		sl.closed = true
	}
	sl.mu.Unlock()
	if last {
		_ = sl.locks.Close()
	}
}

// holders counts the slots not free on a majority of the masters that
// answered: exactly the slots a TryAcquire now would not try.
func (sl *slots) holders(ctx context.Context) (int, error) {
	res := sl.survey(ctx)
	if err := ctx.Err(); err != nil {
		return 0, err
	}
	if err := sl.check("holders", res); err != nil {
		return 0, err
	}
	n := 0
	for _, f := range res.free {
		if f < sl.quorum {
			n++
		}
	}
	return n, nil
}

// close closes the redlock client behind the slots now if no slot is
// claimed (being locked, or held by a permit), and otherwise when the last
// claim ends: a permit keeps its validity, Refresh and Release after Close
// (see Semaphore.Close).
func (sl *slots) close() error {
	sl.mu.Lock()
	sl.closing = true
	now := len(sl.claimed) == 0 && !sl.closed
	if now {
		sl.closed = true
	}
	sl.mu.Unlock()
	if now {
		return sl.locks.Close()
	}
	return nil
}
