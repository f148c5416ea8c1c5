package redlock

import (
	"context"
	"fmt"
	"strings"
	"time"

	layout "github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"
)

// This file is the failure path in one place: releasing a lease, removing
// what a failed attempt may have left, and the per-master sources cleanup
// reads. The background cleaner is in cleaner.go.

// Release deletes the lease's key on every master where it still holds it
// (owner-checked: another owner's key is never touched) and wakes waiters.
// It returns as soon as a majority confirmed that the key is gone; masters
// that did not answer are retried in the background. The lease ends either
// way.
//
// A master answering that the key is not there counts as a confirmation:
// go-redis retries a command whose reply was lost, and the retry of our own
// delete finds nothing.
//
// Errors: nil when the lease was valid and a majority confirmed; an *Error
// matching ErrLockLost when the lease had already been lost (validity over,
// or another owner holds its key on more than M − quorum masters); one
// matching ErrNoQuorum when too few masters answered (the keys then expire
// by their TTL); an error matching ErrReleased when called twice;
// ErrInvalidArgument for a nil lease or context; ErrClosed after the
// Client's Close.
func (l *Lease) Release(ctx context.Context) (err error) {
	if l == nil {
		return invalid("nil lease")
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if l.parts != nil {
		return l.multiRelease(ctx)
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if l.released {
		return fmt.Errorf("release %q: %w", l.key, ErrReleased)
	}
	l.released = true
	start := l.c.cfg.clock.Now()
	granted, masters := 0, []MasterResult(nil)
	defer func() { l.observeLeaseOp(ctx, OpRelease, start, false, granted, masters, err) }()
	if l.c.closed() {
		l.end(ErrClosed)
		return fmt.Errorf("release %q: %w", l.key, ErrClosed)
	}
	lostErr := l.held(l.c.cfg.clock.Now())
	r, d, cause := l.c.releaseAll(ctx, l.key, l.value, l.TTL(), l.acq)
	if lostErr == nil && d == held {
		if l.c.observing() {
			granted, masters = r.count(yes), r.results(append(r.errs, r.silence()...))
		}
		l.end(ErrReleased)
		return nil
	}
	errs := newMasterErrs(len(l.c.masters))
	errs.add(r.errs...)
	errs.add(r.silence()...)
	e := &Error{Op: "release", Key: l.key, Granted: r.count(yes), Counted: r.count(yes), Quorum: l.c.quorum, Answered: r.answered(),
		Of: len(l.c.masters), Cause: cause, Masters: errs.list()}
	if l.c.observing() {
		granted, masters = e.Granted, r.results(e.Masters)
	}
	switch {
	case lostErr != nil:
		e.Kind, e.Cause = ErrLockLost, lostErr
	case r.count(no) > len(l.c.masters)-l.c.quorum:
		e.Kind = ErrLockLost
		l.end(fmt.Errorf("%w: found lost on release", ErrLockLost))
		return e
	default:
		e.Kind = ErrNoQuorum
	}
	l.end(ErrReleased)
	return e
}

// releaseAll runs the owner-checked delete on every master until a majority
// confirmed or a majority became impossible; the others are finished in the
// background. acq are the calls of the attempt that set the keys: where one
// was never answered, the SET may still sit in a stalled master's socket and
// run after our delete, so there a "not there" is checked again later.
func (c *Client) releaseAll(ctx context.Context, key, value string, ttl time.Duration, acq []*call[grant]) (*round[int64], decision, error) {
	timeout := c.masterTimeout(ttl)
	// Whether each master's SET was answered must be read before the
	// deletes go out: a SET still on its way may run after our delete (on
	// another connection) and be answered before the round ends, and then
	// the delete's "not there" proves nothing.
	setSettled := make([]bool, len(c.masters))
	for i := range setSettled {
		setSettled[i] = i >= len(acq) || acq[i] == nil || grantSource{acq[i]}.fate().settled()
	}
	r := startRound(ctx, c, c.allMasters(), timeout, sendRelease(key, value, true))
	d, cause := r.collect(ctx, c.everyoneVotes(), c.quorum, func(i int, rep reply[int64]) (outcome, error) {
		switch rep.val {
		case 1:
			return yes, nil
		case 0:
			return yes, nil // not there: expired, or a retry of our own delete
		}
		return no, c.masters[i].errorf(ErrHeldByOther)
	})
	horizon := c.cfg.clock.Now().Add(max(c.cfg.cleanupHorizon, ttl))
	for i, cl := range r.calls {
		rel := releaseSource{cl, setSettled[i]}
		if o := rel.fate(); o.mayHoldOurKey() {
			c.finishLater(key, value, i, cl.done, rel, timeout, horizon, nil)
		}
	}
	return r, d, cause
}

// sendRelease is the owner-checked delete of one key on one master (see
// releaseRequest). With publish it wakes the key's waiters: only the release
// of a held lease does. Cleanup after a failed attempt does not, or two
// contenders that split the vote would wake each other in lockstep and split
// it again forever.
func sendRelease(key, value string, publish bool) func(*master) request[int64] {
	keys, values := []string{key}, []string{value}
	first := func(res []int64, err error) (int64, error) {
		if err != nil {
			return 0, err
		}
		return res[0], nil
	}
	script := releaseScriptRequest(keys, values, publish)
	viaScript := request[int64]{call: script.call,
		parse: func(cmd *redis.Cmd) (int64, error) { return first(script.parse(cmd)) }}
	viaDELEX := request[int64]{run: func(ctx context.Context, m *master) (int64, error) {
		return first(releaseDELEX(ctx, m, keys, values, publish))
	}}
	return func(m *master) request[int64] {
		if m.hasDELEX() {
			return viaDELEX
		}
		return viaScript
	}
}

// releaseRequest deletes each key on m that still holds its value: with
// DELEX key IFEQ value where the master has it (Redis ≥ 8.4), otherwise with
// release.lua. Per key it answers 1 (deleted), 0 (not there) or -1 (another
// owner's). With publish, the key's waiters are woken.
func releaseRequest(m *master, keys, values []string, publish bool) request[[]int64] {
	if m.hasDELEX() {
		return request[[]int64]{run: func(ctx context.Context, m *master) ([]int64, error) {
			return releaseDELEX(ctx, m, keys, values, publish)
		}}
	}
	return releaseScriptRequest(keys, values, publish)
}

// releaseScriptRequest is releaseRequest with release.lua.
func releaseScriptRequest(keys, values []string, publish bool) request[[]int64] {
	args := make([]any, 0, len(values)+1)
	for _, v := range values {
		args = append(args, v)
	}
	if publish {
		args = append(args, layout.ChannelPrefix)
	} else {
		args = append(args, "")
	}
	return request[[]int64]{call: newScriptCall(releaseScript, keys, args...),
		parse: func(cmd *redis.Cmd) ([]int64, error) {
			res, err := cmd.Int64Slice()
			if err == nil && len(res) != len(keys) {
				err = fmt.Errorf("release script answered %d results for %d keys", len(res), len(keys))
			}
			return res, err
		}}
}

// releaseDELEX is releaseRequest with the native command, pipelined with an
// EXISTS per key that tells "not there" from "another owner's": one round
// trip, like the script. The PUBLISH cannot depend on the delete inside a
// pipeline; waking waiters for a key that was not ours costs them one attempt.
func releaseDELEX(ctx context.Context, m *master, keys, values []string, publish bool) ([]int64, error) {
	pipe := m.rdb.Pipeline()
	dels := make([]*redis.Cmd, len(keys))
	exists := make([]*redis.IntCmd, len(keys))
	for i, k := range keys {
		dels[i] = pipe.Do(ctx, "DELEX", k, "IFEQ", values[i])
		exists[i] = pipe.Exists(ctx, k)
	}
	if publish {
		for _, k := range keys {
			pipe.Publish(ctx, layout.ChannelPrefix+k, "1")
		}
	}
	_, err := pipe.Exec(ctx)
	if err != nil && isUnknownCommand(err) {
		m.delexRefused.Store(true) // downgraded, or behind a proxy: the script from now on
		m.delex.Store(delexNo)
	}
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i := range keys {
		n, err := dels[i].Int64()
		if err != nil {
			return nil, err
		}
		switch {
		case n == 1:
			out[i] = 1
		case exists[i].Val() == 1:
			out[i] = -1
		}
	}
	return out, nil
}

func isUnknownCommand(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "unknown command")
}

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
// that created the key was answered back then (or never sent).
type releaseSource struct {
	c          *call[int64]
	setSettled bool
}

func (s releaseSource) fate() outcome {
	rep, ok := s.c.result()
	switch {
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
