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
// ends, and then every other key's lease ends too (their renewal stops and
// their keys are released in the background); Extend and Release act on
// every key, ValidUntil is the earliest of theirs (the first key's, counted
// from the start of its attempt, unless extended), and Tokens gives each
// key's fencing token. A lease is only returned with validity left: when the
// first keys' validity runs out before the last key is taken, every key is
// released and the call fails.
//
// Errors: as TryLock; ErrInvalidArgument also for no keys or a key listed
// twice; an *Error matching ErrNotAcquired saying "no validity left" when
// taking the keys took longer than the validity of the first.
func (c *Client) TryLockAll(ctx context.Context, keys []string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	sorted, err := c.checkKeys(ctx, keys, ttl, opts)
	if err != nil {
		return nil, err
	}
	l, _, err := c.lockAll(ctx, sorted, ttl, func(k string) (*Lease, bool, error) {
		l, err := c.TryLock(ctx, k, ttl, opts...)
		return l, false, err
	})
	return l, err
}

// LockAll is TryLockAll that waits for each key as Lock does, until ctx
// ends: each key is tried once (TryLock) and, if that fails, waited for
// (Lock). Because every caller takes keys in the same order, callers that
// want overlapping sets of keys never deadlock: a caller waits only for a
// key greater than all those it holds. When the keys taken first are no
// longer held once the last one is because the call waited for a key (their
// validity ran out meanwhile, as can happen without WithAutoExtend), every
// key is released and the call starts over. When it had not waited, taking
// the keys just takes longer than their validity, and starting over would
// fail the same way for ever: LockAll fails as TryLockAll does.
//
// Errors: as Lock; ErrInvalidArgument also for no keys or a key listed
// twice; an *Error matching ErrNotAcquired saying "no validity left" as
// above.
func (c *Client) LockAll(ctx context.Context, keys []string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	sorted, err := c.checkKeys(ctx, keys, ttl, opts)
	if err != nil {
		return nil, err
	}
	take := func(k string) (*Lease, bool, error) {
		l, err := c.TryLock(ctx, k, ttl, opts...)
		var e *Error
		if err == nil || ctx.Err() != nil || !errors.As(err, &e) || errors.Is(err, ErrTokensExhausted) {
			return l, false, err
		}
		l, err = c.Lock(ctx, k, ttl, opts...)
		return l, true, err
	}
	for {
		l, waited, err := c.lockAll(ctx, sorted, ttl, take)
		if err == nil || !waited || !errors.Is(err, errValidityUsedUp) {
			return l, err
		}
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

// errValidityUsedUp marks the failure of a call of several keys whose first
// keys' validity ran out before the last one was taken.
var errValidityUsedUp = errors.New("no validity left")

// lockAll takes each key with take, in order, and combines the leases;
// waited says whether take waited for a key. It stops as soon as a part
// taken is no longer held (its validity ran out) and fails then, as when a
// key cannot be taken, releasing what it took: a lease of several keys is
// held only while all of them are.
func (c *Client) lockAll(ctx context.Context, keys []string, ttl time.Duration, take func(string) (*Lease, bool, error)) (_ *Lease, waited bool, _ error) {
	start := c.cfg.clock.Now()
	parts := make([]*Lease, 0, len(keys))
	fail := func(err error) (*Lease, bool, error) {
		_ = releaseParts(context.WithoutCancel(ctx), parts)
		return nil, waited, err
	}
	expired := func(next string) error {
		for _, p := range parts {
			if lost := p.Err(); lost != nil {
				return &Error{Op: "lock", Key: next, Kind: ErrNotAcquired, Quorum: c.quorum, Masters: []error{
					fmt.Errorf("%w: taking %d of %d keys took %v of a %v TTL, and the lease of %q ended: %w",
						errValidityUsedUp, len(parts), len(keys), c.cfg.clock.Now().Sub(start), ttl, p.key, lost)}}
			}
		}
		return nil
	}
	for _, k := range keys {
		if err := expired(k); err != nil {
			return fail(err)
		}
		l, w, err := take(k)
		waited = waited || w
		if err != nil {
			return fail(err)
		}
		parts = append(parts, l)
	}
	if err := expired(keys[len(keys)-1]); err != nil {
		return fail(err)
	}
	if len(parts) == 1 {
		return parts[0], waited, nil
	}
	return c.combine(parts), waited, nil
}

// manyKeys is the holding of a lease of several keys (LockAll): one lease
// per key, its parts, in the order they were taken.
type manyKeys struct {
	*Lease
	parts []*Lease
}

// combine makes one Lease of several: it ends when any part ends, with that
// part's cause, and then ends the others (see partEnded).
func (c *Client) combine(parts []*Lease) *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Lease{c: c, key: parts[0].key, token: parts[0].token, ctx: ctx, cancel: cancel}
	m := manyKeys{Lease: l, parts: parts}
	l.kind = m
	for _, p := range parts {
		p.startWatch()
		context.AfterFunc(p.ctx, func() { m.partEnded(p) })
	}
	return l
}

// partEnded ends a lease of several keys when the lease of one of them, p,
// ended. Unless that was Release (which releases every part itself), the
// other parts are released in the background: their renewal (with
// WithAutoExtend) stops, and keys that are no longer held together protect
// nothing, so they are freed for others at once instead of being renewed or
// left to expire.
func (l manyKeys) partEnded(p *Lease) {
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
	return l.kind.keyList()
}

func (l oneKey) keyList() []string { return []string{l.key} }

func (l manyKeys) keyList() []string {
	out := make([]string, len(l.parts))
	for i, p := range l.parts {
		out[i] = p.key
	}
	return out
}

// Tokens returns each key's fencing token (zero with WithFencing(false)).
func (l *Lease) Tokens() map[string]fencing.Token {
	if l == nil {
		return make(map[string]fencing.Token)
	}
	return l.kind.tokenMap()
}

func (l oneKey) tokenMap() map[string]fencing.Token {
	return map[string]fencing.Token{l.key: l.token}
}

func (l manyKeys) tokenMap() map[string]fencing.Token {
	out := make(map[string]fencing.Token, len(l.parts))
	for _, p := range l.parts {
		out[p.key] = p.token
	}
	return out
}

// currentTTL is the first part's TTL.
func (l manyKeys) currentTTL() time.Duration { return l.parts[0].TTL() }

// until is the earliest deadline of the parts.
func (l manyKeys) until() time.Time {
	t := l.parts[0].ValidUntil()
	for _, p := range l.parts[1:] {
		if v := p.ValidUntil(); v.Before(t) {
			t = v
		}
	}
	return t
}

// watchEnd has nothing to start: each part's watcher runs from combine on,
// and the end of any part ends the lease (partEnded).
func (l manyKeys) watchEnd() {}

// afterEnd has nothing to tell the Client: each part's own end did.
func (l manyKeys) afterEnd(error, time.Time, time.Duration, bool) {}

// check is Err for a lease of several keys: the first part that ended ends
// the lease.
func (l manyKeys) check() error {
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

// extend extends every part; the first failure is returned (a part found
// lost ends, and with it the whole lease).
func (l manyKeys) extend(ctx context.Context, ttl time.Duration, _ bool) error {
	for _, p := range l.parts {
		if err := p.Extend(ctx, ttl); err != nil {
			return fmt.Errorf("extend %q: %w", p.key, err)
		}
	}
	return nil
}

// release releases every part and ends the lease. A lease that had
// already ended because one part did reports that: its other parts are
// being released in the background (see partEnded).
func (l manyKeys) release(ctx context.Context) error {
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

// state refuses: a lease of several keys cannot be resumed.
func (l manyKeys) state() (LeaseState, error) {
	return LeaseState{}, invalid("a lease of %d keys (LockAll) cannot be resumed", len(l.parts))
}
