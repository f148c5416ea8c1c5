package redlock

import (
	"context"
	"fmt"
	"time"
)

// reply is one master's answer in a round.
type reply[T any] struct {
	master int
	val    T
	err    error
}

// round sends one command to several masters in parallel and hands back their
// answers as they come. It never waits for a master longer than the
// per-master timeout, whatever timeouts the caller's go-redis clients were
// built with: the command runs in its own goroutine, and a goroutine stuck in
// a client that ignores deadlines is simply not waited for. Late answers are
// still recorded (done and final), which is what cleanup after a failed attempt
// needs.
type round[T any] struct {
	c       *Client
	replies chan reply[T]
	timer   Timer
	expired bool         // the per-master timeout passed
	pending map[int]bool // masters whose answer has not been taken yet

	// done[i] is closed when master i's command has returned; final[i] then
	// holds its answer. Only masters in the round have entries.
	done  map[int]chan struct{}
	final map[int]*reply[T]
}

// startRound runs do on each master in idx. The context each command gets
// is detached from ctx's cancellation (an answer that arrives after the
// caller stopped waiting still tells cleanup what happened) and bounded by
// timeout.
func startRound[T any](ctx context.Context, c *Client, idx []int, timeout time.Duration,
	do func(ctx context.Context, m *master) (T, error)) *round[T] {
	r := &round[T]{
		c:       c,
		replies: make(chan reply[T], len(idx)),
		pending: make(map[int]bool, len(idx)),
		done:    make(map[int]chan struct{}, len(idx)),
		final:   make(map[int]*reply[T], len(idx)),
		timer:   c.cfg.clock.NewTimer(timeout),
	}
	detached := context.WithoutCancel(ctx)
	for _, i := range idx {
		m := c.masters[i]
		r.pending[i] = true
		done := make(chan struct{})
		r.done[i] = done
		if !m.tryAcquireSlot() {
			rep := reply[T]{master: i, err: m.errorf(ErrMasterBusy)}
			r.final[i] = &rep
			close(done)
			r.replies <- rep
			continue
		}
		slot := new(reply[T])
		r.final[i] = slot
		go func() {
			defer m.releaseSlot()
			cctx, cancel := context.WithTimeout(detached, timeout)
			v, err := do(cctx, m)
			cancel()
			rep := reply[T]{master: i, val: v, err: err}
			if err != nil {
				rep.err = m.errorf(err)
			}
			if err == nil || isAnswer(err) {
				m.suspect.Store(false) // it answers again
			}
			*slot = rep
			close(done)
			r.replies <- rep
		}()
	}
	return r
}

// next returns the next answer. ok is false once every master answered, the
// per-master timeout passed (the rest count as timed out), or ctx ended
// (cause is then ctx's error).
func (r *round[T]) next(ctx context.Context) (rep reply[T], ok bool, cause error) {
	if len(r.pending) == 0 {
		return rep, false, nil
	}
	select {
	case rep = <-r.replies:
		delete(r.pending, rep.master)
		return rep, true, nil
	case <-r.timer.C():
		r.expired = true
		for i := range r.pending {
			r.c.masters[i].suspect.Store(true)
		}
		return rep, false, nil
	case <-ctx.Done():
		return rep, false, ctxErr(ctx)
	}
}

// collect takes answers until the ones that count (count returns true)
// reach quorum, or quorum can no longer be reached (suspect masters are not
// waited for), or the per-master timeout passes, or ctx ends (cause is then
// ctx's error). It returns how many counted.
func (r *round[T]) collect(ctx context.Context, quorum int, count func(reply[T]) bool) (yes int, cause error) {
	for yes < quorum && yes+r.remaining() >= quorum {
		rep, ok, ctxErr := r.next(ctx)
		if !ok {
			return yes, ctxErr
		}
		if count(rep) {
			yes++
		}
	}
	return yes, nil
}

// remaining is the number of masters whose answer has not been taken and
// may still come in time. A master that let a round time out is suspect
// until it answers again: rounds do not wait for it (its command is still
// sent, and an answer that arrives before the decision still counts), so a
// master that is down costs one timeout, not one per attempt.
func (r *round[T]) remaining() int {
	n := 0
	for i := range r.pending {
		if !r.c.masters[i].suspect.Load() {
			n++
		}
	}
	return n
}

// unanswered lists the masters whose answer has not been taken, in no order.
func (r *round[T]) unanswered() []int {
	out := make([]int, 0, len(r.pending))
	for i := range r.pending {
		out = append(out, i)
	}
	return out
}

// silence explains every master whose answer was not taken: it let the
// per-master timeout pass, or it was not waited for because it is suspect.
func (r *round[T]) silence() []error {
	var errs []error
	for i := range r.pending {
		m := r.c.masters[i]
		if m.suspect.Load() && !r.expired {
			errs = append(errs, m.errorf(fmt.Errorf("%w: not waited for, it let an earlier round time out and has not answered since", ErrMasterTimeout)))
		} else {
			errs = append(errs, m.errorf(ErrMasterTimeout))
		}
	}
	return errs
}

// stop releases the round's timer. Commands still running go on.
func (r *round[T]) stop() { r.timer.Stop() }
