package redlock

import (
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// reply is one master's answer to one command, with what the master said of
// itself right after it (scripts that ask for it: acquire and write-back).
type reply[T any] struct {
	val  T
	err  error
	seen seen
}

// call is one command to one master. Its answer is readable once done is
// closed, however late: a failed attempt's cleanup keeps only the calls it
// needs, not the round.
type call[T any] struct {
	done    chan struct{}
	rep     reply[T]      // set before done is closed
	latency time.Duration // from the round's start to the answer, set before done is closed

	// While the command is out: the round to report to (dropped once
	// answered, so a kept call does not keep its round), the master's
	// index, and how to read a script's answer.
	r     *round[T]
	i     int
	parse func(*redis.Cmd) (T, error)

	// afterAnswer runs once the call is answered (onAnswer); answeredMark once
	// it was.
	afterAnswer atomic.Pointer[func()]
}

// answeredMark is the afterAnswer of an answered call. It is never called.
var answeredMark = new(func())

// onAnswer arranges for *f to run, once, right after cl is answered (in the
// goroutine that answers it), and reports true. It reports false, and
// never runs it, when cl is answered already or another is waiting.
func (cl *call[T]) onAnswer(f *func()) bool {
	return cl.afterAnswer.CompareAndSwap(nil, f)
}

// answer takes a script's answer from the batcher (the queued's to).
func (cl *call[T]) answer(cmd *redis.Cmd, s seen) {
	if err := cmd.Err(); err != nil {
		var zero T
		cl.settleSeen(zero, err, s)
		return
	}
	v, err := cl.parse(cmd)
	cl.settleSeen(v, err, s)
}

// settle frees the master's slot, clears suspect when the master answered,
// and reports.
func (cl *call[T]) settle(v T, err error) { cl.settleSeen(v, err, unseen) }

func (cl *call[T]) settleSeen(v T, err error, s seen) {
	m := cl.r.c.masters[cl.i]
	m.releaseSlot()
	if err == nil || isAnswer(err) {
		m.suspect.Store(false) // it answers again
	}
	cl.finish(reply[T]{val: v, err: err, seen: s})
}

// finish records the answer and tells the round.
func (cl *call[T]) finish(rep reply[T]) {
	r := cl.r
	cl.r, cl.parse = nil, nil
	cl.rep, cl.latency = rep, r.c.cfg.clock.Now().Sub(r.start)
	close(cl.done)
	r.replies <- cl.i
	if f := cl.afterAnswer.Swap(answeredMark); f != nil {
		(*f)()
	}
}

// result returns the answer, and false while there is none.
func (cl *call[T]) result() (reply[T], bool) {
	select {
	case <-cl.done:
		return cl.rep, true
	default:
		return reply[T]{}, false
	}
}
