package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
)

// Lease is a held lock. Mutual exclusion is claimed only before ValidUntil;
// the lease ends (Done closes) when it is released, when its validity runs
// out, or when auto-extension fails. A Lease is safe for concurrent use.
type Lease struct {
	c     *Client
	key   string
	value string // the secret: never logged
	token fencing.Token
	acq   []*call[grant] // the winning attempt's SETs by master, for their late answers
	kind  holding        // one key (oneKey) or several (manyKeys, LockAll)

	ctx    context.Context
	cancel context.CancelCauseFunc

	opMu     sync.Mutex // serialises Extend and Release
	released bool       // Release was called (guarded by opMu)

	mu         sync.Mutex
	ttl        time.Duration
	validUntil time.Time
	ended      error         // nil while held; else why it ended
	changed    chan struct{} // signals the watcher that validUntil moved

	// shared: the lease's value was handed out by State or came from
	// Resume, so another Lease may hold the same keys. Its end then is no
	// proof that the value is free: it is not noted as released, and the
	// Client never overwrites a key holding it (guarded by mu).
	shared bool

	watchOnce sync.Once     // starts the watcher (see startWatch)
	interval  time.Duration // auto-extension's, 0 without
}

// holding is what a Lease does that depends on its kind: a lease of one key
// (oneKey, whose keys sit on the masters) or of several (manyKeys, from
// LockAll, one lease per key). Every Lease method that differs by kind goes
// through it, so that a new one must say what it does for both.
type holding interface {
	currentTTL() time.Duration
	until() time.Time
	watchEnd() // makes sure something ends the lease when its validity runs out
	check() error
	extend(ctx context.Context, ttl time.Duration, auto bool) error
	release(ctx context.Context) error
	state() (LeaseState, error)
	keyList() []string
	tokenMap() map[string]fencing.Token
	afterEnd(cause error, validUntil time.Time, ttl time.Duration, shared bool)
}

// oneKey is the holding of a lease of one key: the Lease itself.
type oneKey struct{ *Lease }

// newLease hands out a lease. Its watcher, which ends it when its validity
// runs out or at Close and renews it with auto-extension, starts at once
// when the lease auto-extends or an Observer waits for its loss, and
// otherwise when somebody first asks for Done or Context: a lease that is
// only released costs no goroutine. Err checks the validity itself.
func (c *Client) newLease(key, value string, ttl time.Duration, token fencing.Token, validUntil time.Time, acq []*call[grant], lc lockConfig) *Lease {
	ctx, cancel := context.WithCancelCause(context.Background())
	l := &Lease{
		c: c, key: key, value: value, token: token, ttl: ttl, acq: acq,
		ctx: ctx, cancel: cancel,
		validUntil: validUntil,
		changed:    make(chan struct{}, 1),
	}
	l.kind = oneKey{l}
	interval := time.Duration(0)
	if lc.autoExtend {
		interval = lc.extendInterval
		if interval == 0 {
			interval = ttl / 3
		}
	}
	l.interval = interval
	l.shared = lc.shared
	c.holders.add(key)
	if interval > 0 || c.observing() {
		l.startWatch()
	}
	return l
}

// startWatch starts the lease's watcher once; with the Client closed, the
// lease ends instead.
func (l *Lease) startWatch() {
	l.watchOnce.Do(func() {
		if !l.c.spawn(l.watch) {
			l.end(errClosedLease)
		}
	})
}

// errClosedLease ends the leases of a closed Client.
var errClosedLease = fmt.Errorf("%w: the lease ended with its Client", ErrClosed)

// Key returns the locked key (the first, for a lease of several keys: see
// Keys).
func (l *Lease) Key() string {
	if l == nil {
		return ""
	}
	return l.key
}

// Token returns the lease's fencing token: strictly greater than the token of
// every lease of the same key that ended before this one was acquired. It is
// zero when the Client was built WithFencing(false). Extend keeps it. For a
// lease of several keys it is the first key's token: see Tokens.
func (l *Lease) Token() fencing.Token {
	if l == nil {
		return 0
	}
	return l.token
}

// TTL returns the TTL the lease was acquired or last extended with.
func (l *Lease) TTL() time.Duration {
	if l == nil {
		return 0
	}
	return l.kind.currentTTL()
}

func (l oneKey) currentTTL() time.Duration {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.ttl
}

// ValidUntil returns the local deadline of the lease: start of the winning
// attempt + TTL − drift allowance. Mutual exclusion is only claimed before it.
func (l *Lease) ValidUntil() time.Time {
	if l == nil {
		return time.Time{}
	}
	return l.kind.until()
}

func (l oneKey) until() time.Time {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.validUntil
}

// Done returns a channel closed when the lease ends for any reason: released,
// validity run out, or renewal failed.
// On a nil lease it returns a closed channel.
func (l *Lease) Done() <-chan struct{} {
	if l == nil {
		return closedChan
	}
	l.kind.watchEnd()
	return l.ctx.Done()
}

// watchEnd starts the watcher, which ends the lease when its validity runs
// out (see newLease).
func (l oneKey) watchEnd() { l.startWatch() }

var closedChan = func() chan struct{} { ch := make(chan struct{}); close(ch); return ch }()

// Context returns a context cancelled when the lease ends. Its cause
// (context.Cause) is ErrReleased after Release, or an error matching
// ErrLockLost when the lease was lost.
// On a nil lease it returns a context already cancelled with
// ErrInvalidArgument.
func (l *Lease) Context() context.Context {
	if l == nil {
		ctx, cancel := context.WithCancelCause(context.Background())
		cancel(invalid("nil lease"))
		return ctx
	}
	l.kind.watchEnd()
	return l.ctx
}

// Err returns nil while the lease is held, and why it ended afterwards; for
// a nil lease, an error matching ErrInvalidArgument.
func (l *Lease) Err() error {
	if l == nil {
		return invalid("nil lease")
	}
	return l.kind.check()
}

func (l oneKey) check() error { return l.held(l.c.cfg.clock.Now()) }

// setDeadline moves ValidUntil after a successful renewal, unless the lease
// ended meanwhile or its old validity ran out before now, when the renewal
// came back (it then returns why: the lease was not held in between).
func (l *Lease) setDeadline(validUntil time.Time, ttl time.Duration, now time.Time) error {
	if ended := l.held(now); ended != nil {
		return ended
	}
	l.mu.Lock()
	ended := l.ended
	if ended == nil {
		l.validUntil, l.ttl = validUntil, ttl
	}
	l.mu.Unlock()
	if ended == nil {
		l.signalChange()
	}
	return ended
}

// shortenDeadline brings ValidUntil forward to validUntil if that is earlier.
func (l *Lease) shortenDeadline(validUntil time.Time) {
	l.mu.Lock()
	moved := validUntil.Before(l.validUntil)
	if moved {
		l.validUntil = validUntil
	}
	l.mu.Unlock()
	if moved {
		l.signalChange()
	}
}

func (l *Lease) signalChange() {
	select {
	case l.changed <- struct{}{}:
	default:
	}
}

// end marks the lease ended with cause, once; a lease that ends lost is
// reported to the Observer.
func (l *Lease) end(cause error) {
	l.mu.Lock()
	first := l.ended == nil
	if first {
		l.ended = cause
	}
	validUntil, ttl, shared := l.validUntil, l.ttl, l.shared
	l.mu.Unlock()
	if first {
		l.kind.afterEnd(cause, validUntil, ttl, shared)
	}
	l.cancel(cause)
}

// afterEnd is what the end of a lease of one key tells the Client, before
// Done closes: its value is free to overwrite, the key is no longer held
// here, and a loss goes to the Observer.
func (l oneKey) afterEnd(cause error, validUntil time.Time, ttl time.Duration, shared bool) {
	if !shared {
		// The lease is over: its keys are ours to overwrite (releasedValues).
		l.c.released.note(l.key, l.value, l.c.cfg.clock.Now().Add(ttl))
	}
	l.c.holders.remove(l.key)
	if errors.Is(cause, ErrLockLost) {
		l.observeLost(cause, validUntil) // before Done closes: whoever waits on Done finds the event
	}
}

// held reports whether the lease is held at now, ending it if its validity
// ran out.
func (l *Lease) held(now time.Time) error {
	l.mu.Lock()
	ended, until := l.ended, l.validUntil
	l.mu.Unlock()
	if ended != nil {
		return ended
	}
	if l.c.closed() {
		l.end(errClosedLease) // as the watcher would have, had it been started
		return errClosedLease
	}
	if !now.Before(until) {
		err := fmt.Errorf("%w: validity ended at %v", ErrLockLost, until.Format(time.RFC3339Nano))
		l.end(err)
		return err
	}
	return nil
}

// watch ends the lease when its validity runs out, and renews it every
// interval (when l.interval > 0, see renewalAfter) until it ends.
func (l *Lease) watch() {
	clk := l.c.cfg.clock
	interval := l.interval
	expiry := clk.NewTimer(l.ValidUntil().Sub(clk.Now()))
	defer expiry.Stop()
	var renew Timer
	var renewC <-chan time.Time // nil without auto-extension: never fires
	var renewed chan error      // the renewal under way, nil when none
	if interval > 0 {
		renew = clk.NewTimer(l.nextRenewal(interval, clk.Now()))
		defer renew.Stop()
		renewC = renew.C()
	}
	for {
		select {
		case <-l.ctx.Done():
			return
		case <-l.changed:
			l.resetExpiry(expiry)
		case <-l.c.closing():
			// A closed Client keeps nothing running: the lease ends now. Its
			// keys are left to expire by their TTL.
			l.end(errClosedLease)
			return
		case <-expiry.C():
			if l.held(clk.Now()) != nil {
				return
			}
			l.resetExpiry(expiry)
		case <-renewC:
			// Renew in another goroutine: the expiry must be served while a
			// renewal is under way, or the lease would look held past ValidUntil.
			renewC = nil
			renewed = make(chan error, 1)
			if !l.c.spawn(func() { renewed <- l.extend(l.ctx, l.TTL(), true) }) {
				renewed <- ErrClosed
			}
		case err := <-renewed:
			renewed = nil
			if err != nil {
				if l.held(clk.Now()) == nil {
					l.lose(fmt.Errorf("%w: auto-extend failed: %w", ErrLockLost, err))
				}
				return
			}
			renew.Reset(l.nextRenewal(interval, clk.Now()))
			renewC = renew.C()
		}
	}
}

// renewalAfter is when auto-extension renews next, with left of validity:
// every interval, or at half the validity left when the interval is not
// shorter than it (a slow attempt or renewal, a resumed lease), so that the
// renewal starts before the validity ends (at least a millisecond on).
func renewalAfter(interval, left time.Duration) time.Duration {
	if interval < left {
		return interval
	}
	return max(left/2, time.Millisecond)
}

// nextRenewal is renewalAfter for the lease's validity at now.
func (l *Lease) nextRenewal(interval time.Duration, now time.Time) time.Duration {
	return renewalAfter(interval, l.ValidUntil().Sub(now))
}

func (l *Lease) resetExpiry(t Timer) {
	if !t.Stop() {
		select {
		case <-t.C():
		default:
		}
	}
	t.Reset(l.ValidUntil().Sub(l.c.cfg.clock.Now()))
}

// lose ends the lease as lost and removes its keys in the background so that
// others need not wait for them to expire. A shared lease's keys are left to
// expire: the other copy may still hold them, valid (see Lease.shared).
func (l *Lease) lose(cause error) {
	l.end(cause)
	l.mu.Lock()
	shared := l.shared
	l.mu.Unlock()
	if shared {
		return
	}
	l.c.spawn(func() {
		ctx, cancel := context.WithTimeout(context.Background(), l.c.masterTimeout(l.TTL()))
		defer cancel()
		_, _, _ = l.c.releaseAll(ctx, l.key, l.value, l.TTL(), l.acq, false)
	})
}
