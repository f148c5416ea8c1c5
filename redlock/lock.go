package redlock

import (
	"context"
	"errors"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Lock acquires key for ttl, retrying until it succeeds or ctx ends.
//
// Callers of one Client waiting for the same key line up first come, first
// served; the head of the line attempts, backs off with jittered exponential
// backoff (WithRetry) and wakes early when a holder releases (the release
// publishes; the Client shares one subscription per master among its
// waiters).
//
// Errors: as TryLock; when ctx ends, the *Error matches ctx's error and the
// last attempt's failure.
func (c *Client) Lock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(key, ttl, opts)
	if err != nil {
		return nil, err
	}
	leave, err := c.queues.join(ctx, key)
	defer leave()
	if err != nil {
		return nil, &Error{Op: "lock", Key: key, Kind: ErrNotAcquired, Quorum: c.quorum, Cause: err}
	}
	wake, unwatch := c.notifier.watch(key)
	defer unwatch()

	b := c.cfg.newBackOff()
	b.Reset()
	for {
		woken := wake() // taken before the attempt: a release during it is not missed
		lease, err := c.attempt(ctx, key, ttl, lc)
		if err == nil {
			return lease, nil
		}
		var e *Error
		if !errors.As(err, &e) || e.Cause != nil {
			return nil, err
		}
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		t := c.cfg.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			e.Cause = context.Cause(ctx)
			return nil, e
		case <-c.closing:
			t.Stop()
			return nil, ErrClosed
		case <-woken:
			t.Stop()
		case <-t.C():
		}
	}
}
