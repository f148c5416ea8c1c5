package redlock

import (
	"context"
	"errors"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/probe"
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

// How a Client reports to its Observer.

// masterResults is each master's part of an operation from its errors
// (MasterErrors), without latencies.
func (c *Client) masterResults(errs []error) []MasterResult {
	out := make([]MasterResult, len(c.masters))
	for i, m := range c.masters {
		out[i] = MasterResult{Master: i, Addr: m.addr}
	}
	// A master's answer says more than its quarantine: it wins when both
	// are there.
	for _, err := range errs {
		var me *MasterError
		if !errors.As(err, &me) || me.Master >= len(out) {
			continue
		}
		if prev := out[me.Master].Err; prev == nil || errors.Is(prev, ErrQuarantined) && !errors.Is(me, ErrQuarantined) {
			out[me.Master].Err = me
		}
	}
	return out
}

// observing reports whether an Observer other than NopObserver is set: the
// per-master results are built only then.
func (c *Client) observing() bool {
	_, nop := c.cfg.observer.(NopObserver)
	return !nop
}

// observed is the context an Observer gets: the operation's, or a
// background one when there is none.
func observed(ctx context.Context) context.Context {
	if ctx == nil {
		return context.Background()
	}
	return ctx
}

// observeAcquire reports one TryLock or one Lock call.
func (c *Client) observeAcquire(ctx context.Context, key string, start time.Time, attempts int, info attemptReport, l *Lease, err error) {
	if !c.observing() {
		return
	}
	e := Event{Op: OpAcquire, Key: key, Outcome: OutcomeOf(err), Start: start, Latency: c.cfg.clock.Now().Sub(start),
		Attempts: attempts, Granted: info.granted, Quorum: c.quorum, Masters: info.masters, Err: err}
	if l != nil {
		e.Token, e.ValidUntil = l.token, l.ValidUntil()
	}
	c.cfg.observer.Observe(observed(ctx), e)
}

// observeLeaseOp reports one Extend or Release of a single-key lease.
func (l *Lease) observeLeaseOp(ctx context.Context, op Op, start time.Time, auto bool, granted int, masters []MasterResult, err error) {
	c := l.c
	if !c.observing() {
		return
	}
	c.cfg.observer.Observe(observed(ctx), Event{Op: op, Key: l.key, Outcome: OutcomeOf(err), Start: start,
		Latency: c.cfg.clock.Now().Sub(start), Granted: granted, Quorum: c.quorum, Token: l.token,
		ValidUntil: l.ValidUntil(), AutoExtend: auto, Masters: masters, Err: err})
}

// observeLost reports a lease that ended without Release.
func (l *Lease) observeLost(cause error, validUntil time.Time) {
	if !l.c.observing() {
		return
	}
	l.c.cfg.observer.Observe(context.Background(), Event{Op: OpLost, Key: l.key, Outcome: OutcomeLost,
		Start: l.c.cfg.clock.Now(), Token: l.token, ValidUntil: validUntil, Err: cause})
}

// observeQuarantine reports master m entering (v does not vote) or leaving
// quarantine.
func (c *Client) observeQuarantine(m *master, v probe.Verdict) {
	if !c.observing() {
		return
	}
	e := Event{Op: OpQuarantine, Outcome: OutcomeLeft, Start: v.Now,
		Masters: []MasterResult{{Master: m.index, Addr: m.addr, Err: v.Err()}}}
	if !v.Votes() {
		e.Outcome, e.Reason, e.ValidUntil = OutcomeEntered, v.String(), v.Until
	}
	c.cfg.observer.Observe(context.Background(), e)
}
