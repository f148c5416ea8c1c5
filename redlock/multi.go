package redlock

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
)

// TryLockAll makes one attempt to acquire every key, for ttl, all or
// nothing: the keys are taken one after the other in one global order
// (sorted), and when one cannot be taken, those already taken are released
// and the error of the one that failed is returned. The result is one Lease
// over all the keys: it ends (Done closes) as soon as any of its keys' leases
// ends, Extend and Release act on every key, ValidUntil is the earliest of
// theirs, and Tokens gives each key's fencing token.
//
// Errors: as TryLock; ErrInvalidArgument also for no keys or a key listed
// twice.
func (c *Client) TryLockAll(ctx context.Context, keys []string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	sorted, err := c.checkKeys(ctx, keys, ttl, opts)
	if err != nil {
		return nil, err
	}
	return c.lockAll(ctx, sorted, func(k string) (*Lease, error) { return c.TryLock(ctx, k, ttl, opts...) })
}

// LockAll is TryLockAll that waits for each key as Lock does, until ctx
// ends. Because every caller takes keys in the same order, callers that
// want overlapping sets of keys never deadlock: a caller waits only for a
// key greater than all those it holds. When a key taken first is no longer
// held once the last one is (its validity ran out while the call waited, as
// can happen without WithAutoExtend), every key is released and the call
// starts over.
//
// Errors: as Lock; ErrInvalidArgument also for no keys or a key listed twice.
func (c *Client) LockAll(ctx context.Context, keys []string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	sorted, err := c.checkKeys(ctx, keys, ttl, opts)
	if err != nil {
		return nil, err
	}
	for {
		l, err := c.lockAll(ctx, sorted, func(k string) (*Lease, error) { return c.Lock(ctx, k, ttl, opts...) })
		if err != nil || l.Err() == nil {
			return l, err
		}
		_ = l.Release(context.WithoutCancel(ctx))
	}
}

// checkKeys validates the arguments of TryLockAll and LockAll and returns
// the keys in the order they are taken.
func (c *Client) checkKeys(ctx context.Context, keys []string, ttl time.Duration, opts []LockOption) ([]string, error) {
	if len(keys) == 0 {
		return nil, invalid("no keys")
	}
	sorted := slices.Clone(keys)
	slices.Sort(sorted)
	for i, k := range sorted {
		if i > 0 && k == sorted[i-1] {
			return nil, invalid("key %q is listed twice", k)
		}
		if _, err := c.prepare(ctx, k, ttl, opts); err != nil {
			return nil, err
		}
	}
	return sorted, nil
}

// lockAll takes each key with take, in order, and combines the leases;
// on a failure it releases what it took.
func (c *Client) lockAll(ctx context.Context, keys []string, take func(string) (*Lease, error)) (*Lease, error) {
	parts := make([]*Lease, 0, len(keys))
	for _, k := range keys {
		l, err := take(k)
		if err != nil {
			releaseParts(context.WithoutCancel(ctx), parts)
			return nil, err
		}
		parts = append(parts, l)
	}
	if len(parts) == 1 {
		return parts[0], nil
	}
	return c.combine(parts), nil
}

// combine makes one Lease of several: it ends when any part ends, with that
// part's cause, and then ends the others (see partEnded).
func (c *Client) combine(parts []*Lease) *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Lease{c: c, key: parts[0].key, token: parts[0].token, parts: parts, ctx: ctx, cancel: cancel}
	for _, p := range parts {
		p.startWatch()
		context.AfterFunc(p.ctx, func() { l.partEnded(p) })
	}
	return l
}

// partEnded ends a lease of several keys when the lease of one of them, p,
// ended. Unless that was Release (which releases every part itself), the
// other parts are released in the background: their renewal (with
// WithAutoExtend) stops, and keys that are no longer held together protect
// nothing, so they are freed for others at once instead of being renewed or
// left to expire.
func (l *Lease) partEnded(p *Lease) {
	cause := context.Cause(p.ctx)
	l.end(cause)
	if errors.Is(cause, ErrReleased) {
		return
	}
	l.c.spawn(func() {
		l.opMu.Lock() // after a Release under way, which then frees every part itself
		defer l.opMu.Unlock()
		ctx, cancel := context.WithTimeout(context.Background(), l.c.masterTimeout(l.TTL()))
		defer cancel()
		for _, q := range l.parts {
			if q != p && q.Err() == nil {
				_ = q.Release(ctx)
			}
		}
	})
}

// releaseParts releases leases in reverse order and joins their errors.
func releaseParts(ctx context.Context, parts []*Lease) error {
	var errs []error
	for i := len(parts) - 1; i >= 0; i-- {
		if err := parts[i].Release(ctx); err != nil {
			errs = append(errs, err)
		}
	}
	return errors.Join(errs...)
}

// Keys returns the lease's keys, in the order they were taken (one key for a
// lease from TryLock or Lock).
func (l *Lease) Keys() []string {
	if l == nil {
		return nil
	}
	if l.parts == nil {
		return []string{l.key}
	}
	out := make([]string, len(l.parts))
	for i, p := range l.parts {
		out[i] = p.key
	}
	return out
}

// Tokens returns each key's fencing token (zero with WithFencing(false)).
func (l *Lease) Tokens() map[string]fencing.Token {
	out := make(map[string]fencing.Token)
	if l == nil {
		return out
	}
	if l.parts == nil {
		out[l.key] = l.token
	}
	for _, p := range l.parts {
		out[p.key] = p.token
	}
	return out
}

// multiValidUntil is the earliest deadline of the parts.
func (l *Lease) multiValidUntil() time.Time {
	t := l.parts[0].ValidUntil()
	for _, p := range l.parts[1:] {
		if v := p.ValidUntil(); v.Before(t) {
			t = v
		}
	}
	return t
}

// multiHeld is held for a lease of several keys.
func (l *Lease) multiHeld() error {
	l.mu.Lock()
	ended := l.ended
	l.mu.Unlock()
	if ended != nil {
		return ended
	}
	for _, p := range l.parts {
		if err := p.Err(); err != nil {
			l.end(err)
			return err
		}
	}
	return nil
}

// multiExtend extends every part; the first failure is returned (a part
// found lost ends, and with it the whole lease).
func (l *Lease) multiExtend(ctx context.Context, ttl time.Duration) error {
	for _, p := range l.parts {
		if err := p.Extend(ctx, ttl); err != nil {
			return fmt.Errorf("extend %q: %w", p.key, err)
		}
	}
	return nil
}

// multiRelease releases every part and ends the lease. A lease that had
// already ended because one part did reports that: its other parts are
// being released in the background (see partEnded).
func (l *Lease) multiRelease(ctx context.Context) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if l.released {
		return fmt.Errorf("release %v: %w", l.Keys(), ErrReleased)
	}
	l.released = true
	l.mu.Lock()
	ended := l.ended
	l.mu.Unlock()
	if ended != nil {
		return fmt.Errorf("release %v: %w", l.Keys(), ended)
	}
	err := releaseParts(ctx, l.parts)
	l.end(ErrReleased)
	return err
}
