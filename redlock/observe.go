package redlock

import (
	"context"
	"errors"
	"time"

	"github.com/quorumlock/quorumlock/internal/probe"
)

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
