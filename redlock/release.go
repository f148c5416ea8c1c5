package redlock

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	layout "github.com/quorumlock/quorumlock/internal/keys"
)

// This file releases a lease. What a failed attempt may have left is
// removed by cleanup.go (at once) and cleaner.go (later, in the background).

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
	return l.kind.release(ctx)
}

// release deletes the key on every master: Release of a lease of one key.
func (l oneKey) release(ctx context.Context) (err error) {
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
	r, d, cause := l.c.releaseAll(ctx, l.key, l.value, l.TTL(), l.acq, true)
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
// is not answered yet, the delete waits for its answer (the usual case: a
// quorum answered and the last SET is a moment behind): queued from the
// answer on script masters, in its goroutine on DELEX ones (afterTheSET).
// Where a delete does not wait (on a script master, the second release of
// a lease whose keys were already being removed; deletes handed to a
// waiting head), the SET may still sit in a stalled master's socket and
// run after our delete, so there a "not there" is checked again later.
// With handOff, the deletes go through the key's parked head, if any, which
// sends its acquire behind them (handoff.go).
func (c *Client) releaseAll(ctx context.Context, key, value string, ttl time.Duration, acq []*call[grant], handOff bool) (*round[int64], decision, error) {
	timeout := c.masterTimeout(ttl)
	// Whether each master's SET was answered must be read before the
	// deletes go out: a SET still on its way may run after our delete (on
	// another connection) and be answered before the round ends, and then
	// the delete's "not there" proves nothing.
	setSettled := make([]bool, len(c.masters))
	for i := range setSettled {
		setSettled[i] = i >= len(acq) || acq[i] == nil || grantSource{acq[i]}.fate().settled()
	}
	r, dels := prepareRound(ctx, c, c.allMasters(), timeout, c.afterTheSET(key, value, acq, setSettled, handOff))
	for _, cl := range r.calls {
		if cl != nil {
			c.deletes.track(cl)
		}
	}
	if !handOff || !c.handOffDeletes(key, dels) {
		// A delete sent while the SET is still out could overtake it (the
		// batcher's pipelines take any of the pool's connections) and
		// leave our key there until a later check. It goes out once the
		// SET is answered instead: the master then runs it after the SET,
		// and its "not there" is final. Deletes handed to a waiting head
		// go at once, in front of its acquire: waiting would let that
		// acquire meet our key.
		for i, d := range dels {
			if d == nil || setSettled[i] {
				continue
			}
			if send := func() { c.submitTo(i, d) }; acq[i].onAnswer(&send) {
				dels[i], setSettled[i] = nil, true
			}
		}
		c.submit(dels)
	}
	d, cause := r.collect(ctx, c.everyoneVotes(), c.quorum, func(i int, rep reply[int64]) (outcome, error) {
		switch rep.val {
		case 1:
			return yes, nil
		case 0:
			return yes, nil // not there: expired, or a retry of our own delete
		}
		return no, c.masters[i].wrap(ErrHeldByOther)
	})
	horizon := c.cfg.clock.Now().Add(max(c.cfg.cleanupHorizon, ttl))
	for i, cl := range r.calls {
		rel := releaseSource{c: cl, setSettled: setSettled[i]}
		if i < len(acq) {
			rel.set = acq[i]
		}
		if o := rel.fate(); o.mayHoldOurKey() {
			c.finishLater(key, value, i, cl.done, rel, timeout, horizon, nil)
		}
	}
	return r, d, cause
}

// errSetStillOut is the answer of a DELEX that waited its whole timeout for
// the acquire's SET to the same master: never sent, and the SET may still
// run (classified as a timeout).
var errSetStillOut = fmt.Errorf("delete not sent: the acquire to this master is still unanswered: %w", context.DeadlineExceeded)

// afterTheSET is sendRelease for releaseAll, with DELEX (which does not go
// through the batcher) sent only once the acquire's SET to the same master
// was answered, so that it cannot overtake it; unless a head of this
// Client's line waits for the key (its acquire goes right behind our
// delete). It marks those masters settled in setSettled: their delete runs
// after the SET, or not at all (errSetStillOut, which releaseSource keeps
// checking).
func (c *Client) afterTheSET(key, value string, acq []*call[grant], setSettled []bool, handOff bool) func(*master) request[int64] {
	send := sendRelease(key, value, true)
	return func(m *master) request[int64] {
		rq, i := send(m), m.index
		if rq.run == nil || setSettled[i] || handOff && c.handoffs.waiting(key) {
			return rq
		}
		setSettled[i] = true
		run, answered := rq.run, acq[i].done
		rq.run = func(ctx context.Context, m *master) (int64, error) {
			select {
			case <-answered:
				return run(ctx, m)
			case <-ctx.Done():
				return 0, errSetStillOut
			}
		}
		return rq
	}
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
		return first(releaseDELEX(ctx, m, keys, values, publish, false))
	}}
	return func(m *master) request[int64] {
		if m.hasDELEX() {
			return viaDELEX
		}
		return viaScript
	}
}

// releaseEach deletes each key on m that still holds its value, waking no
// one: with DELEX key IFEQ value where the master has it (Redis ≥ 8.4),
// otherwise with release.lua. Per key it answers 1 (deleted), 0 (not there)
// or -1 (another owner's). A key that answers an error of its own is that
// key's answer alone (eachKeyAnswer), and the other keys keep theirs. The
// cleaner's batches.
func releaseEach(m *master, keys, values []string) request[[]int64] {
	if m.hasDELEX() {
		return request[[]int64]{run: func(ctx context.Context, m *master) ([]int64, error) {
			return releaseDELEX(ctx, m, keys, values, false, true)
		}}
	}
	rq := releaseScriptRequest(keys, values, false)
	rq.parse = func(cmd *redis.Cmd) ([]int64, error) { return parseReleased(cmd, len(keys), true) }
	return rq
}

// releaseScriptRequest is releaseRequest with release.lua. A call of one key
// may go to its master merged with its neighbours (merge.go).
func releaseScriptRequest(keys, values []string, publish bool) request[[]int64] {
	args := make([]any, 0, len(values)+1)
	if publish {
		args = append(args, layout.ChannelPrefix)
	} else {
		args = append(args, "")
	}
	for _, v := range values {
		args = append(args, v)
	}
	call := newScriptCall(releaseScript, keys, args...)
	if len(keys) == 1 {
		call.merge = releaseMerge
	}
	return request[[]int64]{call: call, parse: func(cmd *redis.Cmd) ([]int64, error) { return parseReleased(cmd, len(keys), false) }}
}

// keyErred is releaseEach's answer for a key whose own error reply says
// nothing of its type (NOPERM, say): that key is as if unanswered.
const keyErred = -2

// eachKeyAnswer reads one key's own error reply for releaseEach: a key of
// another type (nothing of ours is there) as -1, another error as keyErred.
// release.lua's GET says WRONGTYPE; DELEX with a condition says
// delexNotAString (Redis 8.4 and later, and miniredis).
func eachKeyAnswer(err error) int64 {
	if msg := err.Error(); strings.HasPrefix(msg, "WRONGTYPE") || strings.Contains(msg, delexNotAString) {
		return -1
	}
	return keyErred
}

// delexNotAString is DELEX's error for a condition on a key that is not a
// string.
const delexNotAString = "Key should be of string type if conditions are specified"

// keysOwnError reports whether err is an error reply of one key's command,
// not one that fails every key (an unknown command: DELEX refused).
func keysOwnError(err error) bool { return isAnswer(err) && !isUnknownCommand(err) }

// parseReleased reads release.lua's answer for n keys: one reply per key.
// A key's own error reply is the answer's error, or, with eachKey, that
// key's answer alone (eachKeyAnswer).
func parseReleased(cmd *redis.Cmd, n int, eachKey bool) ([]int64, error) {
	res, err := cmd.Slice()
	if err != nil {
		return nil, err
	}
	if len(res) != n {
		return nil, fmt.Errorf("release script answered %d results for %d keys", len(res), n)
	}
	out := make([]int64, n)
	for i, v := range res {
		switch v := v.(type) {
		case int64:
			out[i] = v
		case error:
			if !eachKey {
				return nil, v
			}
			out[i] = eachKeyAnswer(v)
		default:
			return nil, fmt.Errorf("release script answered %T for a key", v)
		}
	}
	return out, nil
}

// releaseDELEX is releaseRequest with the native command, pipelined with an
// EXISTS per key that tells "not there" from "another owner's": one round
// trip, like the script. The PUBLISH cannot depend on the delete inside a
// pipeline; waking waiters for a key that was not ours costs them one attempt.
//
// With eachKey, a key's own error reply is that key's answer alone, as in
// releaseEach.
func releaseDELEX(ctx context.Context, m *master, keys, values []string, publish, eachKey bool) ([]int64, error) {
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
	if err != nil && !(eachKey && keysOwnError(err)) {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i := range keys {
		n, err := dels[i].Int64()
		if err != nil {
			if eachKey && keysOwnError(err) {
				out[i] = eachKeyAnswer(err)
				continue
			}
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
