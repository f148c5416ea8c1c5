package redlock

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// TryLock makes one attempt to acquire key for ttl on a majority of masters.
//
// The attempt sends SET key value NX PX ttl (inside a script that also reads
// the key's fencing counter and the master's certificate) to every master in
// parallel and returns as soon as a majority granted or a majority became
// impossible; it never waits for the slowest master. A grant counts by
// itself only from a master whose certificate names the lineage an INFO sent
// right after it reports (rule V of docs/safety.md); other masters are asked
// too, and their grants count in a round that every master granted, which is
// what lets freshly started masters lock at once. With fencing on (the
// default) the winner then writes its token back to a majority unless round
// 1 already put it there. The lease is held only if its remaining validity,
// ttl − elapsed − (ttl·drift + 2 ms) measured on the monotonic clock from
// before the first send, is positive.
//
// On failure the owner-checked delete is sent to every master that may hold
// the attempt's key, including those that did not answer, and retried in
// the background where the answer is unknown (see WithCleanupHorizon).
//
// Errors: ErrInvalidArgument for bad input (a nil ctx included); an *Error
// matching ErrNotAcquired when the key is held elsewhere, ErrNoQuorum (which
// also matches ErrNotAcquired) when too few masters answered or count, and
// ctx's error when ctx ended first; ErrClosed after Close.
func (c *Client) TryLock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(ctx, key, ttl, opts)
	if err != nil {
		return nil, err
	}
	start := c.cfg.clock.Now()
	l, report, err := c.attempt(ctx, key, ttl, lc, false)
	c.observeAcquire(ctx, key, start, 1, report, l, err)
	return l, err
}

// prepare validates a lock call's arguments and records its TTL, so that
// the quarantine of this very call uses it.
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

// Lock acquires key for ttl, retrying until it succeeds or ctx ends.
//
// Callers of one Client waiting for the same key line up first come, first
// served; the head of the line attempts, backs off with jittered exponential
// backoff (WithRetry) and wakes early when a holder releases (the release
// publishes; the Client shares one subscription per master among its
// waiters). Woken, it attempts at once when the masters that refused it saw
// no other client subscribed to the key, and otherwise after a random delay
// of up to two attempt durations, so that the heads of several processes do
// not split the vote.
//
// Errors: as TryLock; when ctx ends, the *Error matches ctx's error and the
// last attempt's failure; ErrClosed when the Client is closed while the call
// waits (no attempt starts after Close).
func (c *Client) Lock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (lease *Lease, err error) {
	lc, err := c.prepare(ctx, key, ttl, opts)
	if err != nil {
		return nil, err
	}
	start := c.cfg.clock.Now()
	attempts, splits := 0, 0
	var report attemptReport
	defer func() { c.observeAcquire(ctx, key, start, attempts, report, lease, err) }()
	// A free key costs what TryLock costs: while nobody of this Client waits
	// for the key or holds it, the first attempt goes out before any wake-up
	// machinery (no subscription, no line). A refusal then subscribes and
	// lines up, and the line's first attempt follows at once: a release
	// between the refusal and the subscription is not missed. Without
	// release notifications there is nothing to miss: the line waits first.
	waitFirst := false
	var took time.Duration
	if c.queues.idle(key) && !c.holders.holds(key) {
		attempts++
		began := c.cfg.clock.Now()
		lease, report, err = c.attempt(ctx, key, ttl, lc, true)
		if err == nil || !worthWaiting(err) {
			return lease, err
		}
		took, waitFirst = c.cfg.clock.Now().Sub(began), !c.cfg.notifications
	}
	// Subscribe before queueing: the key stays subscribed while anyone of
	// this Client waits for it, so a release is not missed between heads.
	wake, unwatch := c.notifier.watch(key)
	defer unwatch()
	leave, jerr := c.queues.join(ctx, key, c.closing())
	defer leave()
	if errors.Is(jerr, ErrClosed) {
		return nil, jerr
	}
	if jerr != nil {
		return nil, &Error{Op: "lock", Key: key, Kind: ErrNotAcquired, Quorum: c.quorum, Cause: jerr}
	}

	b := c.cfg.newBackOff()
	b.Reset()
	for {
		woken := wake() // taken before the attempt: a release during it is not missed
		heldHere := c.holders.holds(key)
		if !waitFirst {
			began := c.cfg.clock.Now()
			attempts++
			// A split vote matters when the key is contended across clients;
			// while a lease of this Client holds it, the release will wake the
			// line (and a refusal by masters its delete has not reached yet is
			// no split).
			lease, report, err = c.attempt(ctx, key, ttl, lc, !heldHere)
			if err == nil {
				return lease, nil
			}
			if errors.Is(err, ErrClosed) {
				return nil, err
			}
			took = c.cfg.clock.Now().Sub(began)
			heldHere = heldHere || c.holders.holds(key)
			if !worthWaiting(err) {
				return nil, err
			}
		}
		waitFirst = false
		var e *Error
		errors.As(err, &e)
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		split := report.split
		if heldHere {
			split = nil
		}
		t := c.cfg.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			e.Cause = ctxErr(ctx)
			return nil, e
		case <-c.closing():
			t.Stop()
			return nil, ErrClosed
		case <-woken:
			t.Stop()
			splits = 0
			// Every waiting client wakes on the same release. Attempts that
			// start together split the vote and all fail; a random delay of
			// up to two attempt durations spreads them apart. There is no
			// herd when this Client's own lease held the key (its next Lock
			// joins the line behind this head) and the masters that refused
			// saw no other client subscribed to the key's channel: attempt
			// at once. A holder in another client may lock again the moment
			// it releases, so waiting for one keeps the delay.
			if heldHere && report.waiting <= 1 {
				continue
			}
			if !c.sleep(ctx, time.Duration(rand.Int64N(int64(2*took)+1))) {
				return nil, c.waitEnded(ctx, e)
			}
		case <-split:
			t.Stop()
			// A split vote: a master granted this attempt (now or in a late
			// answer) while others were taken, perhaps by a contender whose
			// attempt failed too. Then nobody holds the key and no release
			// will wake anybody: retry after a random delay of up to two
			// attempt durations, doubled with every split in a row (a
			// holder whose key is missing on some masters looks the same),
			// instead of the growing backoff, so that one contender goes
			// first.
			splits = min(splits+1, 16)
			if !c.sleep(ctx, time.Duration(rand.Int64N(int64(took)<<splits+1))) {
				return nil, c.waitEnded(ctx, e)
			}
		case <-t.C():
			splits = 0
		}
	}
}

// worthWaiting reports whether Lock waits and tries again after err: a
// refusal or too few answers, but not the context's end, exhausted tokens,
// a bad argument or Close.
func worthWaiting(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Cause == nil && !errors.Is(err, ErrTokensExhausted)
}

// waitEnded is Lock's answer when a wait between attempts ends early:
// ErrClosed, or the last attempt's error with ctx's cause.
func (c *Client) waitEnded(ctx context.Context, e *Error) error {
	if c.closed() {
		return ErrClosed
	}
	e.Cause = ctxErr(ctx)
	return e
}

// sleep waits d on the client's clock; false when ctx ended or the client
// closed first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctxDone(ctx) == nil && !c.closed()
	}
	t := c.cfg.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-c.closing():
		return false
	case <-t.C():
		return true
	}
}
