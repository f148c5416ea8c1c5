package semaphore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/background"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/internal/refusal"
	"github.com/quorumlock/quorumlock/redlock"
)

// Semaphore admits up to limit holders of a name at once. It is safe for
// concurrent use; Close it when done.
type Semaphore struct {
	name  string
	limit int
	cfg   config

	one   store  // Basic, Fair, Guarded, and Atomic on one master
	slots *slots // Atomic on several masters

	waiter *waiter
	gate   chan struct{} // on several masters: one Acquire attempt at a time

	bg *background.Group // background work Close waits for

	// midAcquire, when set (by tests), runs inside an attempt: between
	// Fair's (and Guarded's) two round trips, before Atomic's one script,
	// and between the multi-master survey and its slot lock.
	midAcquire func()
}

// store is a semaphore kept on one master.
type store interface {
	// acquire makes one attempt for the permit id; an error matching ErrBusy
	// when the semaphore is full.
	acquire(ctx context.Context, id string) (fencing.Token, error)
	// refresh renews id for another timeout; an error matching ErrLost when
	// it was no longer held (it is then removed, never re-added).
	refresh(ctx context.Context, id string) error
	// release removes id and wakes waiters; an error matching ErrLost when it
	// had already timed out or been removed.
	release(ctx context.Context, id string) error
	holders(ctx context.Context) (int, error)
	close() error
}

// New returns a semaphore named name admitting up to limit holders, over the
// caller's go-redis clients (which stay the caller's: Close does not close
// them). Basic, Fair and Guarded take exactly one master; Atomic takes one,
// or up to quorum.MaxMasters independent masters, where it keeps limit
// Redlock slots (limit at most MaxSlots). Clients should be built with
// ContextTimeoutEnabled (package cluster does) so that a stalled master
// cannot hold a call past its context.
//
// Every client of a semaphore must use the same limit: the masters record
// the limit in LimitKey(name), and TryAcquire, Acquire (and Holders on
// several masters) with another limit fail with ErrInvalidArgument naming
// both. On one master the recorded limit can change once no permit is held;
// on several it stays until LimitKey(name) is deleted on every master.
//
// New does no I/O. It returns an error matching ErrInvalidArgument for
// limit < 1, an empty name, nil or zero masters, more than one master for
// Basic, Fair or Guarded, or an unusable option.
func New(masters []redis.UniversalClient, name string, limit int, opts ...Option) (*Semaphore, error) {
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalid("nil option")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	switch {
	case name == "":
		return nil, invalid("empty name")
	case limit < 1:
		return nil, invalid("limit %d is below 1", limit)
	case len(masters) == 0:
		return nil, invalid("no masters")
	case len(masters) > quorum.MaxMasters:
		return nil, invalid("%d masters; at most %d are supported", len(masters), quorum.MaxMasters)
	case len(masters) > 1 && cfg.variant != Atomic:
		return nil, invalid("variant %v takes exactly one master, got %d", cfg.variant, len(masters))
	case len(masters) > 1 && limit > MaxSlots:
		return nil, invalid("limit %d is above %d, the most slots a multi-master semaphore keeps", limit, MaxSlots)
	case cfg.autoRefresh && cfg.refreshInterval >= cfg.timeout-drift(cfg.timeout):
		return nil, invalid("auto-refresh interval %v is not shorter than the validity of a %v permit", cfg.refreshInterval, cfg.timeout)
	}
	for i, m := range masters {
		if m == nil {
			return nil, invalid("master %d is a nil client", i)
		}
	}
	s := &Semaphore{name: name, limit: limit, cfg: cfg, bg: background.New()}
	k := keysFor(name)
	var channels []string
	if len(masters) > 1 {
		sl, err := newSlots(s, masters)
		if err != nil {
			return nil, err
		}
		s.slots = sl
		s.gate = make(chan struct{}, 1)
		channels = sl.channels()
	} else {
		rdb := masters[0]
		switch cfg.variant {
		case Basic:
			s.one = &basic{s: s, rdb: rdb, k: k}
		case Fair:
			s.one = &fair{s: s, rdb: rdb, k: k}
		case Guarded:
			g, err := newGuarded(s, rdb, k)
			if err != nil {
				return nil, err
			}
			s.one = g
		default:
			s.one = &atomicOne{s: s, rdb: rdb, k: k}
		}
		channels = []string{k.channel}
	}
	s.waiter = newWaiter(s, masters, channels)
	return s, nil
}

// Name returns the semaphore's name.
func (s *Semaphore) Name() string { return s.name }

// Limit returns the most permits held at once.
func (s *Semaphore) Limit() int { return s.limit }

// Variant returns the algorithm in use.
func (s *Semaphore) Variant() Variant { return s.cfg.variant }

// TryAcquire makes one attempt to take a permit. It fails fast: when limit
// permits are held it returns an error matching ErrBusy at once (Atomic on
// several masters knows after at most two round trips).
//
// Errors: ErrBusy; ErrInvalidArgument when the semaphore's holders use
// another limit (see New); redlock.ErrTokensExhausted when the one-master
// Atomic counter reached fencing.MaxToken; redlock.ErrMisconfigured when the
// master, or on several masters so many that no majority is possible,
// refuses the commands for a reason waiting does not change (NOPERM,
// NOAUTH, WRONGPASS, WRONGTYPE, an unknown command: see Acquire); ErrClosed
// after Close; ctx's error when ctx ended; on several masters, an error
// matching redlock.ErrNoQuorum when fewer than a majority answered;
// otherwise the master's error.
func (s *Semaphore) TryAcquire(ctx context.Context) (*Permit, error) {
	if s.closed() {
		return nil, ErrClosed
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("semaphore %q: %w", s.name, err)
	}
	if s.slots != nil {
		return s.slots.tryAcquire(ctx)
	}
	id := newID()
	start := s.cfg.clock.Now()
	octx, cancel := context.WithTimeout(ctx, s.attemptTimeout())
	token, err := s.one.acquire(octx, id)
	cancel()
	if err != nil {
		var reply redis.Error
		if !errors.As(err, &reply) && !errors.Is(err, ErrBusy) {
			s.giveBack(id) // no answer: the master may have admitted id
		}
		if cerr := ctx.Err(); cerr != nil && !errors.Is(err, cerr) {
			err = fmt.Errorf("%w: %w", cerr, err)
		}
		if !errors.Is(err, redlock.ErrMisconfigured) && refusal.ForGood(err) {
			// The one master is the majority: it refuses for good.
			err = fmt.Errorf("%w: %w", redlock.ErrMisconfigured, err)
		}
		return nil, fmt.Errorf("semaphore %q: %w", s.name, err)
	}
	p := newPermit(s, id, token, start)
	s.cfg.logger.Debug("semaphore: acquired", "name", s.name, "variant", s.cfg.variant.String(), "token", uint64(token))
	return p, nil
}

// giveBackSettle is how long after a first give-back giveBack removes the
// permit once more: an attempt whose answer was lost (its context ended, the
// connection broke) may still sit in a stalled master's socket, and run
// after a release sent on another connection.
const giveBackSettle = time.Second

// giveBack removes, in the background, the place an attempt without an
// answer may have taken (owner-checked by id): at once, and again after
// giveBackSettle. Without it the place would stay taken until its timeout
// (the permit's holder never learned of it). Close ends the wait.
func (s *Semaphore) giveBack(id string) {
	s.goBackground(func() {
		release := func() {
			ctx, cancel := context.WithTimeout(context.Background(), s.masterTimeout())
			defer cancel()
			if err := s.one.release(ctx, id); err != nil && !errors.Is(err, ErrLost) {
				s.cfg.logger.Debug("semaphore: giving back an unanswered attempt's place", "name", s.name, "err", err)
			}
		}
		release()
		t := s.cfg.clock.NewTimer(giveBackSettle)
		defer t.Stop()
		select {
		case <-t.C():
			release()
		case <-s.closing():
		}
	})
}

// Holders reports how many permits are live now: entries not timed out on
// the master, or, on several masters, slots not free on a majority of the
// masters that answered. Basic and Fair count entries of attempts still
// deciding (their second round trip) as well.
func (s *Semaphore) Holders(ctx context.Context) (int, error) {
	if s.closed() {
		return 0, ErrClosed
	}
	if s.slots != nil {
		return s.slots.holders(ctx)
	}
	octx, cancel := context.WithTimeout(ctx, s.masterTimeout())
	defer cancel()
	n, err := s.one.holders(octx)
	if err != nil {
		return 0, fmt.Errorf("semaphore %q: holders: %w", s.name, err)
	}
	return n, nil
}

// Close stops the semaphore's background work (subscriptions, auto-refresh,
// background removals) and waits for it; TryAcquire and Acquire then return
// ErrClosed. Permits already handed out keep their validity: Refresh and
// Release still work, but nothing refreshes them automatically any more, so
// each ends at its ValidUntil unless refreshed by hand. (On several masters
// the redlock client behind the slots is closed when the last permit ends.)
// Close does not close the go-redis clients. It is safe to call twice.
func (s *Semaphore) Close() error {
	var err error
	if s.bg.Stop() {

		s.waiter.close()
		if s.slots != nil {
			err = s.slots.close()
		} else {
			err = s.one.close()
		}
	}
	s.bg.Wait()
	return err
}

func (s *Semaphore) closed() bool { return s.bg.Stopped() }

// closing is closed by Close: goroutines watch it to end.
func (s *Semaphore) closing() <-chan struct{} { return s.bg.Done() }

// goBackground runs f in a goroutine Close waits for; after Close it runs
// nothing.
func (s *Semaphore) goBackground(f func()) bool { return s.bg.Go(f) }

// masterTimeout bounds one call to one master: a tenth of the timeout, at
// least 50 ms and at most 1 s (redlock's rule for a TTL).
func (s *Semaphore) masterTimeout() time.Duration {
	return min(max(s.cfg.timeout/10, 50*time.Millisecond), time.Second)
}

// drift is the validity a permit gives up to clock drift between client and
// server: timeout·1 % + 2 ms (redlock's default allowance).
func drift(timeout time.Duration) time.Duration {
	return timeout/100 + 2*time.Millisecond
}

// attemptTimeout bounds one one-master attempt: two round trips, and the
// guard wait for Guarded.
func (s *Semaphore) attemptTimeout() time.Duration {
	d := 2 * s.masterTimeout()
	if s.cfg.variant == Guarded {
		d += s.cfg.guardWait + 2*s.masterTimeout()
	}
	return d
}

func (s *Semaphore) timeoutMs() int64 { return s.cfg.timeout.Milliseconds() }

// hook runs the test hook, if any.
func (s *Semaphore) hook() {
	if s.midAcquire != nil {
		s.midAcquire()
	}
}

// oneMasterLimitChange says when a one-master semaphore's limit may change.
const oneMasterLimitChange = "it can change once no permit is held"

// limitArg is the limit as the scripts compare it.
func (s *Semaphore) limitArg() string { return strconv.Itoa(s.limit) }

// limitReply is checkLimit for the EVAL of limit.lua inside a MULTI.
func (s *Semaphore) limitReply(cmd *redis.Cmd) error {
	v, err := cmd.Text()
	if err != nil {
		return fmt.Errorf("limit check: %w", err)
	}
	return s.checkLimit(v)
}

// checkLimit reads the answer of a one-master limit check (limit.lua, or
// the same lines in acquire.lua): nil when the caller's limit stands.
func (s *Semaphore) checkLimit(stored string) error {
	if stored == s.limitArg() {
		return nil
	}
	return limitMismatch(s.name, s.limit, stored, oneMasterLimitChange)
}
