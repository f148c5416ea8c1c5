package redlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// TryLock makes one attempt to acquire key for ttl on a majority of masters.
//
// The attempt sends SET key value NX PX ttl (inside a script that also reads
// the key's fencing counter) to every master in parallel and returns as soon
// as a majority granted or a majority became impossible; it never waits for
// the slowest master. With fencing on (the default) the winner then writes
// its token back to a majority. The lease is held only if its remaining
// validity, ttl − elapsed − (ttl·drift + 2 ms) measured on the monotonic
// clock from before the first send, is positive.
//
// On failure the owner-checked delete is sent to every master, including
// those that did not answer, and retried in the background where the answer
// is unknown (see WithCleanupHorizon).
//
// Errors: ErrInvalidArgument for bad input; an *Error matching
// ErrNotAcquired when the key is held elsewhere, ErrNoQuorum (which also
// matches ErrNotAcquired) when too few masters answered, and ctx's error when
// ctx ended first; ErrClosed after Close.
func (c *Client) TryLock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(key, ttl, opts)
	if err != nil {
		return nil, err
	}
	return c.attempt(ctx, key, ttl, lc)
}

// prepare validates a lock call's arguments.
func (c *Client) prepare(key string, ttl time.Duration, opts []LockOption) (lockConfig, error) {
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
	if lc.autoExtend && lc.extendInterval >= ttl-drift(ttl, c.cfg.driftFactor) {
		return lc, invalid("auto-extend interval %v is not shorter than the validity of a %v lease", lc.extendInterval, ttl)
	}
	c.noteTTL(ttl)
	return lc, nil
}

// grant is one master's answer to round 1.
type grant struct {
	granted bool
	counter fencing.Token
	epoch   string
}

func (c *Client) sendAcquire(key, value string, ttl time.Duration) func(context.Context, *master) (grant, error) {
	keys := []string{key, FencePrefix + key, EpochKey}
	ms := ttl.Milliseconds()
	return func(ctx context.Context, m *master) (grant, error) {
		res, err := m.batch.eval(ctx, acquireScript, keys, value, ms).Slice()
		if err != nil {
			return grant{}, err
		}
		return parseGrant(res)
	}
}

func parseGrant(res []any) (grant, error) {
	if len(res) != 3 {
		return grant{}, fmt.Errorf("acquire script returned %d values, want 3", len(res))
	}
	n, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	epoch, ok3 := res[2].(string)
	if !ok1 || !ok2 || !ok3 {
		return grant{}, fmt.Errorf("acquire script returned %T, %T, %T", res[0], res[1], res[2])
	}
	t, err := parseCounter(ctr)
	if err != nil {
		return grant{}, err
	}
	return grant{granted: n == 1, counter: t, epoch: epoch}, nil
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
func (c *Client) attempt(ctx context.Context, key string, ttl time.Duration, lc lockConfig) (*Lease, error) {
	if err := ctxDone(ctx); err != nil {
		return nil, &Error{Op: "lock", Key: key, Kind: ErrNotAcquired, Quorum: c.quorum, Cause: err}
	}
	voters, masterErrs := c.voters(ctx)
	value := newValue()
	timeout := c.masterTimeout(ttl)
	start := c.cfg.clock.Now()

	if len(voters) < c.quorum {
		// Bound to fail: send nothing rather than place keys to clean up.
		if cause := ctxDone(ctx); cause != nil {
			return nil, &Error{Op: "lock", Key: key, Kind: ErrNotAcquired, Quorum: c.quorum, Cause: cause, Masters: masterErrs}
		}
		return nil, &Error{Op: "lock", Key: key, Kind: ErrNoQuorum, Granted: 0, Quorum: c.quorum, Masters: masterErrs}
	}
	r := startRound(ctx, c, voters, timeout, c.sendAcquire(key, value, ttl))
	var granted []int
	var highest fencing.Token
	_, cause := r.collect(ctx, c.quorum, func(rep reply[grant]) bool {
		switch {
		case rep.err != nil:
			masterErrs = multierror.Append(masterErrs, rep.err)
		case !c.acceptEpoch(rep.master, rep.val.epoch):
			masterErrs = multierror.Append(masterErrs, c.masters[rep.master].errorf(ErrQuarantined))
		case rep.val.granted:
			granted = append(granted, rep.master)
			highest = max(highest, rep.val.counter)
			return true
		default:
			masterErrs = multierror.Append(masterErrs, c.masters[rep.master].errorf(ErrHeldByOther))
		}
		return false
	})
	r.stop()
	if cause == nil {
		masterErrs = multierror.Append(masterErrs, r.silence()...)
	}

	fail := func(kind error, n int) (*Lease, error) {
		c.cleanupAttempt(key, value, ttl, start, r)
		if cause == nil {
			cause = ctxDone(ctx) // it may have ended before the rounds, e.g. during probes
		}
		if cause != nil {
			kind = ErrNotAcquired
		}
		err := &Error{Op: "lock", Key: key, Kind: kind, Granted: n, Quorum: c.quorum, Cause: cause, Masters: masterErrs}
		c.cfg.logger.Debug("redlock: attempt failed", "key", key, "granted", n, "quorum", c.quorum, "err", err)
		return nil, err
	}
	if len(granted) < c.quorum {
		return fail(c.failureKind(masterErrs), len(granted))
	}

	var token fencing.Token
	if c.cfg.fencing {
		var wbErrs *multierror.Error
		var ok int
		token, ok, wbErrs, cause = c.writeBack(ctx, key, value, granted, highest+1, timeout)
		masterErrs = multierror.Append(masterErrs, wbErrs)
		if token == 0 {
			return fail(c.failureKind(wbErrs), ok)
		}
	}

	validUntil := start.Add(ttl - drift(ttl, c.cfg.driftFactor))
	if !c.cfg.clock.Now().Before(validUntil) {
		masterErrs = multierror.Append(masterErrs, fmt.Errorf("no validity left: the attempt took %v of a %v TTL", c.cfg.clock.Now().Sub(start), ttl))
		return fail(ErrNotAcquired, len(granted))
	}
	c.cfg.logger.Debug("redlock: acquired", "key", key, "token", uint64(token), "validity", validUntil.Sub(c.cfg.clock.Now()))
	return newLease(c, key, value, ttl, token, validUntil, r, lc), nil
}

// failureKind tells "held by another owner" from "too few answers": the
// attempt failed with ErrNotAcquired when some master said the key is held
// elsewhere (or the key's tokens are exhausted), and with ErrNoQuorum when
// only errors and silence stood in the way.
func (c *Client) failureKind(errs *multierror.Error) error {
	if errs != nil {
		for _, e := range errs.Errors {
			if errors.Is(e, ErrHeldByOther) || errors.Is(e, ErrTokensExhausted) {
				return ErrNotAcquired
			}
		}
	}
	return ErrNoQuorum
}

// writeBack is round 2: raise the fencing counter to token on the granting
// masters where value still owns key, until a majority agreed. When a master
// reports a counter at or above token (only a rejoining master's counter sync
// can do that), the round is run once more with a token above it. It returns
// the token and the number of masters that took it, or token 0 when fewer than
// a majority did.
func (c *Client) writeBack(ctx context.Context, key, value string, granted []int, token fencing.Token, timeout time.Duration) (fencing.Token, int, *multierror.Error, error) {
	keys := []string{key, FencePrefix + key}
	var errs *multierror.Error
	for try := 0; try < 2; try++ {
		if token > fencing.MaxToken {
			return 0, 0, multierror.Append(errs, fmt.Errorf("%w: the counter of %q", ErrTokensExhausted, key)), nil
		}
		t := token
		r := startRound(ctx, c, granted, timeout, func(ctx context.Context, m *master) ([]any, error) {
			return m.batch.eval(ctx, writeBackScript, keys, value, t.String()).Slice()
		})
		above := fencing.Token(0)
		ok, cause := r.collect(ctx, c.quorum, func(rep reply[[]any]) bool {
			if rep.err != nil {
				errs = multierror.Append(errs, rep.err)
				return false
			}
			status, counter, err := parseWriteBack(rep.val)
			switch {
			case err != nil:
				errs = multierror.Append(errs, c.masters[rep.master].errorf(err))
			case status == 1:
				return true
			case status == 0:
				above = max(above, counter)
			default:
				errs = multierror.Append(errs, c.masters[rep.master].errorf(ErrHeldByOther))
			}
			return false
		})
		r.stop()
		if ok >= c.quorum {
			return t, ok, errs, nil
		}
		if cause == nil {
			errs = multierror.Append(errs, r.silence()...)
		}
		if cause != nil || above == 0 {
			return 0, ok, errs, cause
		}
		token = above + 1
	}
	return 0, 0, errs, nil
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

// notSent reports whether err proves the command never reached the master
// (ErrMasterBusy: nothing was sent).
func notSent(err error) bool { return errors.Is(err, ErrMasterBusy) }

// isAnswer reports whether err is the master's own answer (a Redis error
// reply): the master was reached and nothing of ours is still queued there.
// It does not prove that nothing was applied: go-redis may have retried
// after a lost reply to a command that did run.
func isAnswer(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
