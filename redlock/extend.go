package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// Extend renews the lease for ttl on every master where it still holds the
// key. It never recreates an expired or stolen key (the script only
// PEXPIREs a key that still holds the lease's value), does nothing once
// ValidUntil has passed, and succeeds only if a majority agreed within the new
// validity, which then becomes ValidUntil. Every master is asked, restart
// quarantine or not: what counts is where the lease's own key still is. The
// fencing token is kept.
//
// When it fails, some masters may already run the key on the new TTL, which
// may be shorter than the old one: ValidUntil then becomes the earlier of the
// old one and the new validity (start of the round + ttl − drift allowance),
// and the lease ends if that has passed.
//
// Errors: ErrInvalidArgument for a bad ttl, a nil lease or context; an
// *Error matching ErrLockLost when the lease has ended or more than
// M − quorum masters no longer hold its key (the lease then ends); one
// matching ErrNoQuorum when too few masters answered; ErrClosed after the
// Client's Close.
func (l *Lease) Extend(ctx context.Context, ttl time.Duration) error {
	return l.extend(ctx, ttl, false)
}

// extend is Extend; auto says a renewal of WithAutoExtend made the call.
func (l *Lease) extend(ctx context.Context, ttl time.Duration, auto bool) (err error) {
	if l == nil {
		return invalid("nil lease")
	}
	if err := checkCtx(ctx); err != nil {
		return err
	}
	if err := l.c.checkTTL(ttl); err != nil {
		return err
	}
	return l.kind.extend(ctx, ttl, auto)
}

// extend renews the key on every master: Extend of a lease of one key.
func (l oneKey) extend(ctx context.Context, ttl time.Duration, auto bool) (err error) {
	c := l.c
	l.opMu.Lock()
	defer l.opMu.Unlock()
	start := c.cfg.clock.Now()
	granted, masters := 0, []MasterResult(nil)
	defer func() { l.observeLeaseOp(ctx, OpExtend, start, auto, granted, masters, err) }()
	if c.closed() {
		return fmt.Errorf("extend %q: %w", l.key, ErrClosed)
	}
	if ended := l.held(start); ended != nil {
		return &Error{Op: "extend", Key: l.key, Kind: ErrLockLost, Quorum: c.quorum, Cause: ended}
	}
	c.noteTTL(ttl)
	rq := request[int64]{call: newScriptCall(extendScript, []string{l.key, keys.Lambda}, l.value, ttl.Milliseconds()),
		parse: func(cmd *redis.Cmd) (int64, error) { return cmd.Int64() }}
	r := startRound(ctx, c, c.allMasters(), c.masterTimeout(ttl), func(*master) request[int64] { return rq })
	d, cause := r.collect(ctx, c.everyoneVotes(), c.quorum, func(i int, rep reply[int64]) (outcome, error) {
		switch rep.val {
		case 1:
			return yes, nil
		case 0:
			return no, c.masters[i].wrap(ErrKeyAbsent)
		}
		return no, c.masters[i].wrap(ErrHeldByOther)
	})
	errs := newMasterErrs(len(c.masters))
	errs.add(r.errs...)
	if cause == nil {
		errs.add(r.silence()...)
	}
	e := &Error{Op: "extend", Key: l.key, Granted: r.count(yes), Counted: r.count(yes), Quorum: c.quorum, Answered: r.answered(),
		Of: len(c.masters), Cause: cause, Masters: errs.list()}
	if c.observing() {
		granted, masters = e.Granted, r.results(e.Masters)
	}
	newDeadline := c.deadline(start, ttl)
	if now := c.cfg.clock.Now(); d == held && now.Before(newDeadline) {
		if ended := l.setDeadline(newDeadline, ttl, now); ended != nil {
			// The old validity ran out while the round was under way: the lease
			// ended, whatever the masters said. Take the renewed keys back.
			e.Kind, e.Cause = ErrLockLost, ended
			l.lose(ended)
			return e
		}
		return nil
	}
	// Failed: masters that ran the PEXPIRE keep the key for ttl only.
	l.shortenDeadline(newDeadline)
	switch {
	case r.count(no) > len(c.masters)-c.quorum:
		e.Kind = ErrLockLost
		l.lose(e)
	case d == held:
		e.Kind = ErrNoQuorum
		e.Masters = append(e.Masters, fmt.Errorf("no validity left: extending took %v of a %v TTL", c.cfg.clock.Now().Sub(start), ttl))
	default:
		e.Kind = ErrNoQuorum
	}
	if ended := l.held(c.cfg.clock.Now()); ended != nil && e.Kind != ErrLockLost {
		e.Kind, e.Cause = ErrLockLost, ended
	}
	return e
}
