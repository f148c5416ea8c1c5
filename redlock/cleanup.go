package redlock

import (
	"context"
	"errors"
	"time"
)

// This file removes what a failed attempt may have left: its key, owner
// checked, on every master that may hold it (cleanupAttempt), including
// masters that answer only later (finishLater, then the background cleaner
// of cleaner.go), each judged by the fate of the command that may have
// written it (source).

// source is the command whose fate decides whether a key of ours may be left
// on one master: its outcome as known now (waiting while it has not returned).
type source interface{ fate() outcome }

// grantSource is an acquiring SET.
type grantSource struct{ c *call[grant] }

func (s grantSource) fate() outcome {
	rep, ok := s.c.result()
	switch {
	case !ok:
		return waiting
	case rep.err != nil:
		return outcomeOf(rep.err)
	case rep.val.granted:
		return yes
	}
	return no
}

// releaseSource is an owner-checked delete; setSettled says whether the SET
// that created the key was answered back then (or never sent), and set is
// that SET's call when known. A master that refused the SET, or was never
// sent it, holds nothing of ours and never will: each attempt's value goes
// to each master in one call only.
type releaseSource struct {
	c          *call[int64]
	setSettled bool
	set        *call[grant]
}

func (s releaseSource) fate() outcome {
	if s.set != nil && !(grantSource{s.set}).fate().mayHoldOurKey() {
		return no
	}
	rep, ok := s.c.result()
	switch {
	case ok && errors.Is(rep.err, errSetStillOut):
		return transport // never sent, and the SET may still run
	case ok && rep.err == nil && (rep.val == 1 || s.setSettled):
		return no // nothing of ours is left, and nothing can appear
	case s.setSettled:
		return errorReply // the delete's fate is unknown, the SET's is not: one more delete settles it
	}
	return transport // the SET may still run: keep checking
}

// cleanupAttempt removes what a failed attempt may have left. The masters
// that granted (or answered with an error, which a go-redis retry may hide
// a grant behind) are live: the owner-checked delete is sent to them at once
// and waited for (up to the per-master timeout), so that the next attempt,
// ours or a contender's, does not trip over our keys. Every master whose
// answer is still to come is finished in the background. Masters that
// refused, or were never sent the SET, need nothing.
//
// granted, when not nil, is called once a master is known to have granted
// the attempt: now, or when a late answer comes (Lock's split-vote rule);
// it may be called more than once.
func (c *Client) cleanupAttempt(key, value string, ttl time.Duration, start time.Time, calls []*call[grant], granted func()) {
	timeout := c.masterTimeout(ttl)
	horizon := start.Add(max(c.cfg.cleanupHorizon, ttl))
	var seen func(outcome)
	if granted != nil {
		seen = func(o outcome) {
			if o == yes {
				granted()
			}
		}
	}
	var live []int
	for i, cl := range calls {
		if cl == nil {
			continue
		}
		switch o := (grantSource{cl}).fate(); {
		case !o.mayHoldOurKey():
		case o.settled():
			if seen != nil {
				seen(o)
			}
			live = append(live, i)
		default:
			c.finishLater(key, value, i, cl.done, grantSource{cl}, timeout, horizon, seen)
		}
	}
	if len(live) == 0 {
		return
	}
	r := startRound(context.Background(), c, live, timeout, sendRelease(key, value, false))
	r.await(func(int, reply[int64]) (outcome, error) {
		return yes, nil // deleted, not there, or another owner's: nothing of ours is left
	})
	for _, i := range live {
		if o := r.out[i]; o != yes {
			c.cleaners[i].add(key, value, grantSource{calls[i]}, horizon)
		}
	}
}

// finishLater waits (up to timeout) for the answer that decides whether
// key may be left on master i, and acts on it at once: nothing to do, one
// owner-checked delete, or, when the answer does not come or does not
// settle it, the master's cleaner. Waiting for the answer instead of
// checking after a fixed delay matters: under contention a key left behind
// by a split vote blocks every contender until it is gone. seen, when not
// nil, is told the outcome it waited for.
func (c *Client) finishLater(key, value string, i int, done <-chan struct{}, src source, timeout time.Duration, horizon time.Time, seen func(outcome)) {
	c.spawn(func() {
		t := c.cfg.clock.NewTimer(timeout)
		select {
		case <-done:
			t.Stop()
		case <-t.C():
		case <-c.closing():
			t.Stop()
			return
		}
		o := src.fate()
		if seen != nil {
			seen(o)
		}
		if !o.mayHoldOurKey() {
			return
		}
		if o.settled() {
			r := startRound(context.Background(), c, []int{i}, timeout, sendRelease(key, value, false))
			d, _ := r.collect(context.Background(), c.everyoneVotes(), 1, func(int, reply[int64]) (outcome, error) { return yes, nil })
			if d == held {
				return // deleted, or not there: the SET was answered, nothing can appear any more
			}
		}
		c.cleaners[i].add(key, value, src, horizon)
	})
}
