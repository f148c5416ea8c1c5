package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// TryLock makes one attempt to acquire key for ttl on a majority of masters.
//
// The attempt sends SET key value NX PX ttl (inside a script that also reads
// the key's fencing counter) to every master in parallel and returns as soon
// as a majority granted or a majority became impossible; it never waits for
// the slowest master. Masters in restart quarantine are asked too: their
// grants count only in a round that every master granted (docs/safety.md),
// which is what lets freshly started masters lock at once. With fencing on
// (the default) the winner then writes its token back to a majority. The
// lease is held only if its remaining validity, ttl − elapsed − (ttl·drift +
// 2 ms) measured on the monotonic clock from before the first send, is
// positive.
//
// On failure the owner-checked delete is sent to every master that may hold
// the attempt's key, including those that did not answer, and retried in
// the background where the answer is unknown (see WithCleanupHorizon).
//
// Errors: ErrInvalidArgument for bad input (a nil ctx included); an *Error
// matching ErrNotAcquired when the key is held elsewhere, ErrNoQuorum (which
// also matches ErrNotAcquired) when too few masters answered or may vote,
// and ctx's error when ctx ended first; ErrClosed after Close.
func (c *Client) TryLock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(ctx, key, ttl, opts)
	if err != nil {
		return nil, err
	}
	start := c.cfg.clock.Now()
	var info attemptInfo
	l, err := c.attempt(ctx, key, ttl, lc, &info)
	c.observeAcquire(ctx, key, start, 1, info, l, err)
	return l, err
}

// prepare validates a lock call's arguments and records its TTL, so that
// the quarantine rule of this very call uses it.
func (c *Client) prepare(ctx context.Context, key string, ttl time.Duration, opts []LockOption) (lockConfig, error) {
	if err := checkCtx(ctx); err != nil {
		return lockConfig{}, err
	}
	if c.closed() {
		return lockConfig{}, ErrClosed
	}
	if err := c.checkKeyTTL(key, ttl); err != nil {
		return lockConfig{}, err
	}
	lc, err := applyLockOptions(opts)
	if err != nil {
		return lc, err
	}
	if lc.autoExtend && lc.extendInterval >= c.validity(ttl) {
		return lc, invalid("auto-extend interval %v is not shorter than the validity of a %v lease", lc.extendInterval, ttl)
	}
	c.noteTTL(ttl)
	return lc, nil
}

// grant is one master's answer to round 1.
type grant struct {
	granted bool
	counter fencing.Token // before any raise
	epoch   string
	raised  bool // the counter was raised to the proposal
	// waiting is, when refused, how many clients are subscribed to the key's
	// release channel on that master: the clients waiting for the key; -1
	// when the master would not say (an ACL user without +pubsub|numsub).
	waiting int64
}

// waitingUnknown stands for a refusing master that would not say how many
// clients wait: Lock then assumes a herd.
const waitingUnknown = 1 << 30

func (c *Client) sendAcquire(key, value string, ttl time.Duration, proposal fencing.Token, releasedValue string) func(*master) request[grant] {
	rq := request[grant]{
		call: newScriptCall(acquireScript, []string{key, FencePrefix + key, EpochKey},
			value, ttl.Milliseconds(), proposal.String(), releasedValue, ChannelPrefix+key),
		parse: func(cmd *redis.Cmd) (grant, error) {
			res, err := cmd.Slice()
			if err != nil {
				return grant{}, err
			}
			return parseGrant(res)
		},
	}
	return func(*master) request[grant] { return rq }
}

func parseGrant(res []any) (grant, error) {
	if len(res) != 5 {
		return grant{}, fmt.Errorf("acquire script returned %d values, want 5", len(res))
	}
	n, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	epoch, ok3 := res[2].(string)
	raised, ok4 := res[3].(int64)
	waiting, ok5 := res[4].(int64)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 {
		return grant{}, fmt.Errorf("acquire script returned %T, %T, %T, %T, %T", res[0], res[1], res[2], res[3], res[4])
	}
	t, err := parseCounter(ctr)
	if err != nil {
		return grant{}, err
	}
	return grant{granted: n == 1, counter: t, epoch: epoch, raised: raised == 1, waiting: waiting}, nil
}

func parseCounter(s string) (fencing.Token, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || fencing.Token(v) > fencing.MaxToken {
		return 0, fmt.Errorf("fencing counter %q is not an integer below 2^53", s)
	}
	return fencing.Token(v), nil
}

// attempt is one acquisition attempt: round 1, the fencing write-back, the
// validity check, and cleanup on failure.
func (c *Client) attempt(ctx context.Context, key string, ttl time.Duration, lc lockConfig, info *attemptInfo) (*Lease, error) {
	fail := func(kind error, e *Error) (*Lease, error) {
		if info.masters == nil && c.observing() {
			info.masters = c.masterResults(e.Masters)
		}
		e.Op, e.Key, e.Quorum = "lock", key, c.quorum
		if e.Cause == nil {
			e.Cause = ctxDone(ctx) // it may have ended before the rounds, e.g. during probes
		}
		e.Kind = kind
		if e.Cause != nil {
			e.Kind = ErrNotAcquired
		}
		c.cfg.logger.Debug("redlock: attempt failed", "key", key, "granted", e.Granted, "quorum", c.quorum, "err", e)
		return nil, e
	}
	if err := ctxDone(ctx); err != nil {
		return fail(ErrNotAcquired, &Error{Cause: err})
	}
	if c.closed() {
		return nil, ErrClosed
	}
	el := c.electorate(ctx)
	if el.mayVote < c.quorum && len(el.send) < len(c.masters) {
		// Bound to fail: send nothing rather than place keys to clean up.
		return fail(ErrNoQuorum, &Error{MayVote: el.mayVote, Answered: len(el.send), Masters: el.errs})
	}
	value := newValue()
	timeout := c.masterTimeout(ttl)
	var proposal fencing.Token
	if c.cfg.fencing {
		proposal = c.tokens.proposal(key)
	}
	start := c.cfg.clock.Now()
	r := startRound(ctx, c, el.send, timeout, c.sendAcquire(key, value, ttl, proposal, c.released.value(key, start)))
	votes := el.votes
	raised := make([]bool, len(c.masters))
	var highest fencing.Token
	d, cause := r.collect(ctx, votes, c.quorum, func(i int, rep reply[grant]) (outcome, error) {
		highest = max(highest, rep.val.counter)
		if !rep.val.granted {
			w := rep.val.waiting
			if w < 0 { // the master would not say (ACL): assume a herd
				w = waitingUnknown
			}
			info.waiting = max(info.waiting, w)
			return no, c.masters[i].errorf(ErrHeldByOther)
		}
		if votes[i] && !c.acceptEpoch(i, rep.val.epoch) {
			votes[i] = false
			el.errs = append(el.errs, c.masters[i].errorf(fmt.Errorf("%w: its grant came with a new epoch marker", ErrDataLost)))
		}
		raised[i] = rep.val.raised
		return yes, nil
	})
	c.tokens.note(key, highest)
	// The per-master errors are put together only when somebody reads them
	// (a failure, an Observer): a granted lock does not pay for them.
	round1Decided := cause == nil
	var wbErrs []error
	masterErrs := func(extra ...error) []error {
		var silence []error
		if round1Decided {
			silence = r.silence()
		}
		return slices.Concat(el.errs, r.errs, silence, wbErrs, extra)
	}
	failed := func(kind error, extra ...error) (*Lease, error) {
		errs := masterErrs(extra...)
		if c.observing() {
			info.granted, info.masters = r.count(yes), r.results(errs)
		}
		var granted func()
		if info.watchSplit && !errors.Is(kind, ErrNoQuorum) {
			split := make(chan struct{})
			granted = sync.OnceFunc(func() { close(split) })
			info.split = split
		}
		c.cleanupAttempt(key, value, ttl, start, r.calls, granted)
		return fail(kind, &Error{Granted: r.count(yes), Answered: r.answered(), MayVote: el.mayVote, Cause: cause, Masters: errs})
	}
	if d != held {
		return failed(failureKind(r.out))
	}

	var token fencing.Token
	switch {
	case !c.cfg.fencing:
	case proposal > 0 && fastPath(r.out, votes, raised, c.quorum):
		token = proposal // already on a majority: no write-back round
	default:
		next := highest
		for _, up := range raised {
			if up {
				next = max(next, proposal) // some counters are at the proposal now
			}
		}
		var kind error
		token, kind, wbErrs, cause = c.writeBack(ctx, key, value, r.masters(yes), votes, next+1, timeout)
		if token == 0 {
			return failed(kind)
		}
	}
	c.tokens.note(key, token)

	validUntil := c.deadline(start, ttl)
	if now := c.cfg.clock.Now(); !now.Before(validUntil) {
		return failed(ErrNotAcquired, fmt.Errorf("no validity left: the attempt took %v of a %v TTL", now.Sub(start), ttl))
	}
	if c.observing() {
		info.granted, info.masters = r.count(yes), r.results(masterErrs())
	}
	c.cfg.logger.Debug("redlock: acquired", "key", key, "token", uint64(token), "validity", validUntil.Sub(c.cfg.clock.Now()))
	return c.newLease(key, value, ttl, token, validUntil, r.calls, lc), nil
}

// fastPath reports whether round 1 already put its proposed token on a
// majority above every earlier token, so that round 2 is not needed: q
// masters that count by themselves granted and raised their counter to the
// proposal (their counters were below it, and any earlier token sits on a
// write-back majority that shares an intact master with them), or every
// master granted and raised (the all-grant rule's counterpart: every
// counter was below it). docs/fencing.md gives the argument; the spin model
// checks it.
func fastPath(out []outcome, votes, raised []bool, q int) bool {
	counted, all := 0, true
	for i, o := range out {
		up := o == yes && raised[i]
		all = all && up
		if up && votes[i] {
			counted++
		}
	}
	return counted >= q || all
}

// writeBack is round 2: raise the fencing counter to token on the granting
// masters where value still owns key, until a majority agreed. Confirmations
// count like grants (votes are round 1's): q from masters that count by
// themselves, or one from every master. Counting a quarantined master's ok
// otherwise lets a later fast path reuse the token (the spin model's
// counterexample, docs/fencing-model.md). When a master
// reports a counter at or above token (only a rejoining master's counter sync
// can do that), the round is run once more with a token above it. It returns
// the token, or token 0 and the failure's kind when fewer than a majority
// took it.
func (c *Client) writeBack(ctx context.Context, key, value string, granted []int, votes []bool, token fencing.Token, timeout time.Duration) (fencing.Token, error, []error, error) {
	keys := []string{key, FencePrefix + key}
	var errs []error
	for range 2 {
		if token > fencing.MaxToken {
			return 0, ErrNotAcquired, append(errs, fmt.Errorf("%w: the counter of %q", ErrTokensExhausted, key)), nil
		}
		t := token
		rq := request[[]any]{call: newScriptCall(writeBackScript, keys, value, t.String()),
			parse: func(cmd *redis.Cmd) ([]any, error) { return cmd.Slice() }}
		r := startRound(ctx, c, granted, timeout, func(*master) request[[]any] { return rq })
		above := fencing.Token(0)
		d, cause := r.collect(ctx, votes, c.quorum, func(i int, rep reply[[]any]) (outcome, error) {
			status, counter, err := parseWriteBack(rep.val)
			switch {
			case err != nil:
				return errorReply, c.masters[i].errorf(fmt.Errorf("%w: %w", ErrReplyError, err))
			case status == 1:
				return yes, nil
			case status == 0:
				above = max(above, counter)
				return no, c.masters[i].errorf(fmt.Errorf("%w: %d, token %d", ErrCounterAhead, counter, t))
			}
			return no, c.masters[i].errorf(ErrHeldByOther)
		})
		errs = append(errs, r.errs...)
		if d == held {
			return t, nil, errs, nil
		}
		if cause == nil {
			errs = append(errs, r.silence()...)
		}
		if cause != nil || above == 0 {
			return 0, failureKind(r.out), errs, cause
		}
		token = above + 1
	}
	return 0, ErrNotAcquired, errs, nil
}

func parseWriteBack(res []any) (int64, fencing.Token, error) {
	if len(res) != 2 {
		return 0, 0, fmt.Errorf("write-back script returned %d values, want 2", len(res))
	}
	status, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	if !ok1 || !ok2 {
		return 0, 0, fmt.Errorf("write-back script returned %T, %T", res[0], res[1])
	}
	t, err := parseCounter(ctr)
	return status, t, err
}

// isAnswer reports whether err is the master's own answer (a Redis error
// reply): the master was reached and nothing of ours is still queued there.
// It does not prove that nothing was applied: go-redis may have retried
// after a lost reply to a command that did run.
func isAnswer(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
