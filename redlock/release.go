package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/hashicorp/go-multierror"
)

// Release deletes the lease's key on every master where it still holds it
// (owner-checked: another owner's key is never touched) and wakes waiters.
// It returns as soon as a majority confirmed; masters that did not answer are
// retried in the background. The lease ends either way.
//
// Errors: nil when a majority deleted the lease's key while it was valid; an
// *Error matching ErrLockLost when the lease had already been lost (validity
// over, keys expired or taken over); one matching ErrNoQuorum when too few
// masters answered (the keys then expire by their TTL); an error matching
// ErrReleased when called twice.
func (l *Lease) Release(ctx context.Context) error {
	l.opMu.Lock()
	defer l.opMu.Unlock()
	if l.released {
		return fmt.Errorf("release %q: %w", l.key, ErrReleased)
	}
	l.released = true
	lostErr := l.held(l.c.cfg.clock.Now())
	deleted, notOwner, errs, cause := l.c.releaseAll(ctx, l.key, l.value, l.TTL(), l.unsettled())
	e := &Error{Op: "release", Key: l.key, Granted: deleted, Quorum: l.c.quorum, Cause: cause, Masters: errs}
	switch {
	case lostErr != nil:
		e.Kind, e.Cause = ErrLockLost, lostErr
	case deleted >= l.c.quorum:
		l.end(ErrReleased)
		return nil
	case notOwner > len(l.c.masters)-l.c.quorum:
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
// background. It returns how many deleted the key and how many answered
// that it was not theirs.
//
// unsettled lists the masters where the acquiring SET was never answered: it
// may still sit in a stalled master's socket and run after our delete, so
// there a "0" answer is checked once more before cleanup stops.
func (c *Client) releaseAll(ctx context.Context, key, value string, ttl time.Duration, unsettled map[int]bool) (deleted, notOwner int, errs *multierror.Error, cause error) {
	timeout := c.masterTimeout(ttl)
	r := startRound(ctx, c, c.allMasters(), timeout, sendRelease(key, value, true))
	var recheck []int
	deleted, cause = r.collect(ctx, c.quorum, func(rep reply[int64]) bool {
		switch {
		case rep.err != nil:
			errs = multierror.Append(errs, rep.err)
			recheck = append(recheck, rep.master)
		case rep.val == 1:
			return true
		default:
			notOwner++
			if unsettled[rep.master] {
				recheck = append(recheck, rep.master)
			}
		}
		return false
	})
	r.stop()
	horizon := c.cfg.clock.Now().Add(max(c.cfg.cleanupHorizon, ttl))
	for _, i := range append(recheck, r.unanswered()...) {
		c.finishLater(key, value, i, r.done[i], releaseFate(r, i, !unsettled[i]), timeout, horizon)
	}
	return deleted, notOwner, errs, cause
}

// releaseFate reads master i's answer to a release round. settled says
// whether the acquiring SET on that master was answered back then.
func releaseFate(r *round[int64], i int, settled bool) fate {
	return func() (bool, bool, bool) {
		select {
		case <-r.done[i]:
			rep := *r.final[i]
			if rep.err == nil && (rep.val == 1 || settled) {
				return true, false, true
			}
			return true, true, settled
		default:
			return false, true, settled
		}
	}
}
