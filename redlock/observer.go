package redlock

import (
	"context"
	"errors"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
)

// Op names the operation an Event reports.
type Op string

// The operations a Client reports to its Observer.
const (
	// OpAcquire is one TryLock, or one Lock call as a whole (all its
	// attempts; Event.Attempts counts them).
	OpAcquire Op = "acquire"
	// OpExtend is one Extend call, or one automatic renewal.
	OpExtend Op = "extend"
	// OpRelease is one Release call.
	OpRelease Op = "release"
	// OpLost is a lease ending without Release: its validity ran out or a
	// renewal failed. Event.Err says why.
	OpLost Op = "lost"
	// OpQuarantine is a master entering or leaving restart quarantine
	// (Event.Outcome OutcomeEntered or OutcomeLeft; Event.Reason says why).
	OpQuarantine Op = "quarantine"
)

// Outcome is how an operation ended. Its values are few and fixed, fit for a
// metric label.
type Outcome string

// Outcomes.
const (
	OutcomeOK          Outcome = "ok"
	OutcomeNotAcquired Outcome = "not_acquired" // held by another owner
	OutcomeNoQuorum    Outcome = "no_quorum"    // fewer than a majority answered or may vote
	OutcomeLost        Outcome = "lost"         // the lease is no longer held
	OutcomeCanceled    Outcome = "canceled"     // the caller's context ended
	OutcomeInvalid     Outcome = "invalid"      // ErrInvalidArgument, ErrClosed, ErrReleased
	OutcomeError       Outcome = "error"        // anything else
	OutcomeEntered     Outcome = "entered"      // OpQuarantine: the master stopped voting
	OutcomeLeft        Outcome = "left"         // OpQuarantine: the master votes again
)

// OutcomeOf maps an operation's error to its Outcome: OutcomeOK for nil,
// then by errors.Is in this order: a context error (OutcomeCanceled),
// ErrLockLost, ErrNoQuorum, ErrNotAcquired, ErrInvalidArgument / ErrClosed
// / ErrReleased, else OutcomeError.
func OutcomeOf(err error) Outcome {
	switch {
	case err == nil:
		return OutcomeOK
	case errors.Is(err, context.Canceled), errors.Is(err, context.DeadlineExceeded):
		return OutcomeCanceled
	case errors.Is(err, ErrLockLost):
		return OutcomeLost
	case errors.Is(err, ErrNoQuorum):
		return OutcomeNoQuorum
	case errors.Is(err, ErrNotAcquired):
		return OutcomeNotAcquired
	case errors.Is(err, ErrInvalidArgument), errors.Is(err, ErrClosed), errors.Is(err, ErrReleased):
		return OutcomeInvalid
	}
	return OutcomeError
}

// MasterResult is one master's part of an operation.
type MasterResult struct {
	Master  int           // index in the slice given to New
	Addr    string        // the client's address, for humans
	Latency time.Duration // from the operation's start to this master's answer; 0 without one
	Err     error         // nil when the master agreed (granted, extended, deleted)
}

// Kind classifies the master's result in a few fixed words, fit for a metric
// label: "ok", "held_by_other", "key_absent", "timeout", "not_waited_for",
// "busy", "quarantined", "unreachable", "reply_error", "canceled" or
// "error".
func (r MasterResult) Kind() string {
	switch {
	case r.Err == nil:
		return "ok"
	case errors.Is(r.Err, ErrHeldByOther):
		return "held_by_other"
	case errors.Is(r.Err, ErrKeyAbsent):
		return "key_absent"
	case errors.Is(r.Err, ErrMasterTimeout), errors.Is(r.Err, context.DeadlineExceeded):
		return "timeout"
	case errors.Is(r.Err, ErrNotWaitedFor):
		return "not_waited_for"
	case errors.Is(r.Err, ErrMasterBusy):
		return "busy"
	case errors.Is(r.Err, ErrQuarantined):
		return "quarantined"
	case errors.Is(r.Err, ErrUnreachable):
		return "unreachable"
	case errors.Is(r.Err, ErrReplyError):
		return "reply_error"
	case errors.Is(r.Err, context.Canceled):
		return "canceled"
	}
	return "error"
}

// Event is what an Observer is told when an operation ends. Which fields are
// set depends on Op:
//
//   - OpAcquire: Key, Outcome, Start, Latency (the whole call), Attempts,
//     Granted and Quorum of the last attempt, Masters of the last attempt,
//     Token and ValidUntil when acquired, Err when not.
//   - OpExtend, OpRelease: Key, Outcome, Start, Latency, Granted, Quorum,
//     Masters, Token, ValidUntil (the new one after an extension), Err.
//     AutoExtend is true for renewals made by WithAutoExtend.
//   - OpLost: Key, Outcome (OutcomeLost), Start (when the loss was noticed),
//     Token, ValidUntil (the validity that ran out), Err (the cause).
//   - OpQuarantine: Outcome (OutcomeEntered or OutcomeLeft), Start, Masters
//     (the one master), Reason, ValidUntil (when it may vote again, if known).
//
// Key is the lock key: an adapter must not turn it into a metric label by
// default (unbounded cardinality). An Event never carries the lock value.
type Event struct {
	Op         Op
	Key        string
	Outcome    Outcome
	Start      time.Time     // when the operation began (the client's clock)
	Latency    time.Duration // how long it took
	Attempts   int           // OpAcquire: quorum rounds tried (1 for TryLock)
	Granted    int           // masters that agreed
	Quorum     int           // masters needed
	Token      fencing.Token // the lease's fencing token, 0 if none
	ValidUntil time.Time
	AutoExtend bool
	Masters    []MasterResult
	Reason     string // OpQuarantine: why the master does not vote
	Err        error  // nil on success
}

// Observer receives an Event at the end of every operation of a Client
// (acquire, extend, release), when a lease is lost, and when a master
// enters or leaves quarantine. Observe is called synchronously on the
// operation's goroutine, after the operation's outcome is settled, with the
// operation's context (a lost lease or a quarantine change is reported with
// a background context): it must be fast, must not block, and must be safe
// for concurrent use. It cannot change the outcome.
//
// Adapters live in their own packages so that redlock imports neither:
// redlock/observe/promobserver (Prometheus metrics) and
// redlock/observe/otelobserver (OpenTelemetry spans).
type Observer interface {
	Observe(ctx context.Context, e Event)
}

// ObserverFunc adapts a function to Observer.
type ObserverFunc func(ctx context.Context, e Event)

// Observe calls f(ctx, e).
func (f ObserverFunc) Observe(ctx context.Context, e Event) { f(ctx, e) }

// NopObserver ignores every Event. It is a Client's default observer.
type NopObserver struct{}

// Observe does nothing.
func (NopObserver) Observe(context.Context, Event) {}

// Observers fans every Event out to each of obs, in order. Nil entries are
// skipped.
func Observers(obs ...Observer) Observer {
	var out multiObserver
	for _, o := range obs {
		if o != nil {
			out = append(out, o)
		}
	}
	return out
}

type multiObserver []Observer

func (m multiObserver) Observe(ctx context.Context, e Event) {
	for _, o := range m {
		o.Observe(ctx, e)
	}
}
