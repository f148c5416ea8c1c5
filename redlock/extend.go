package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Extend renews the lease for ttl on every master where it still holds the
// key. It never recreates an expired or stolen key (the script only
// PEXPIREs a key that still holds the lease's value), does nothing once
// ValidUntil has passed, and succeeds only if a majority agreed within the new
// validity, which then becomes ValidUntil. The fencing token is kept.
//
// Errors: ErrInvalidArgument for a bad ttl; an *Error matching ErrLockLost
// when the lease has ended or a majority no longer holds its key (the lease
// then ends); one matching ErrNoQuorum when too few masters answered (the
// lease keeps its previous ValidUntil).
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	c := l.c
	if err := c.checkTTL(ttl); err != nil {
		return err
	}
	l.opMu.Lock()
	defer l.opMu.Unlock()
	start := c.cfg.clock.Now()
	if ended := l.held(start); ended != nil {
		return &Error{Op: "extend", Key: l.key, Kind: ErrLockLost, Quorum: c.quorum, Cause: ended}
	}
	c.noteTTL(ttl)
	voters, errs := c.voters(ctx)
	ms := ttl.Milliseconds()
	keys := []string{l.key}
	r := startRound(ctx, c, voters, c.masterTimeout(ttl), func(ctx context.Context, m *master) (int64, error) {
		return m.batch.eval(ctx, extendScript, keys, l.value, ms).Int64()
	})
	notOwner := 0
	ok, cause := r.collect(ctx, c.quorum, func(rep reply[int64]) bool {
		switch {
		case rep.err != nil:
			errs = multierror.Append(errs, rep.err)
		case rep.val == 1:
			return true
		default:
			notOwner++
			errs = multierror.Append(errs, c.masters[rep.master].errorf(ErrHeldByOther))
		}
		return false
	})
	r.stop()
	e := &Error{Op: "extend", Key: l.key, Granted: ok, Quorum: c.quorum, Cause: cause, Masters: errs}
	validUntil := start.Add(ttl - drift(ttl, c.cfg.driftFactor))
	switch {
	case ok >= c.quorum && c.cfg.clock.Now().Before(validUntil):
		l.mu.Lock()
		ended := l.ended
		if ended == nil {
			l.validUntil, l.ttl = validUntil, ttl
		}
		l.mu.Unlock()
		if ended != nil {
			// The old validity ran out while the round was under way: the lease
			// ended, whatever the masters said. Take the renewed keys back.
			e.Kind, e.Cause = ErrLockLost, ended
			l.lose(ended)
			return e
		}
		select {
		case l.changed <- struct{}{}:
		default:
		}
		return nil
	case notOwner > len(c.masters)-c.quorum:
		e.Kind = ErrLockLost
		l.lose(e)
	case ok >= c.quorum:
		e.Kind = ErrNoQuorum
		e.Masters = multierror.Append(e.Masters, fmt.Errorf("no validity left: extending took %v of a %v TTL", c.cfg.clock.Now().Sub(start), ttl))
	default:
		e.Kind = ErrNoQuorum
	}
	return e
}
