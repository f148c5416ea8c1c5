package semaphore

import (
	"log/slog"
	"strconv"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/quorumlock/quorumlock/internal/retry"
	"github.com/quorumlock/quorumlock/redlock"
)

// Defaults of a Semaphore. Each can be changed with an Option.
const (
	// DefaultTimeout is how long a permit lives without Refresh.
	DefaultTimeout = 10 * time.Second
	// MinTimeout is the shortest timeout accepted: a permit must outlive a
	// few round trips.
	MinTimeout = 100 * time.Millisecond
	// DefaultGuardWait is how long a Guarded TryAcquire waits for the guard
	// lock (the book's acquire_timeout, raised from 10 ms so that a busy
	// guard is not mistaken for a full semaphore on a loaded client).
	DefaultGuardWait = 100 * time.Millisecond
	// GuardTTL is the TTL of the guard lock Guarded takes around its two
	// round trips.
	GuardTTL = time.Second
	// MaxSlots bounds the limit of a multi-master Atomic semaphore: each
	// attempt reads every slot's key on every master.
	MaxSlots = 1024
)

// Variant selects the algorithm (see the package documentation and
// docs/semaphores.md).
type Variant int

const (
	// Atomic (the default) acquires and refreshes with one Lua script that
	// scores with the server's TIME and hands out a fencing token per permit
	// from one counter: no client clock and no second round trip take part,
	// so it never over-admits. On two or more masters it is limit Redlock
	// slots (docs/semaphores.md proves the bound), tolerating the failure of
	// a minority of masters. The right choice for a hard external limit: a
	// third-party connection cap, licensed seats.
	Atomic Variant = iota
	// Basic is the book's first semaphore (Redis in Action 6.3.1): a ZSET
	// scored by the client's wall clock, one MULTI per attempt. Fastest, but
	// a client whose clock runs ahead can have its place silently taken by a
	// later client with a slower clock (the steal). The right choice only
	// for a soft cap, where overshooting by one for a moment is harmless.
	// One master.
	Basic
	// Fair is the book's fair semaphore (6.3.2): an INCR counter orders the
	// holders, so clocks that disagree by a second or two no longer decide;
	// but the two round trips of two attempts can interleave and admit one
	// too many, without telling the one pushed out. A soft cap only. One
	// master.
	Fair
	// Guarded is the book's semaphore with a lock (6.3.3): Fair's two round
	// trips under a short-lived guard lock taken with package redlock, so
	// the limit holds every time, as long as no client's clock runs ahead by
	// more than the timeout. Defensible for a hard limit on one master; Atomic
	// does the same in one round trip. One master.
	Guarded
)

func (v Variant) String() string {
	switch v {
	case Atomic:
		return "Atomic"
	case Basic:
		return "Basic"
	case Fair:
		return "Fair"
	case Guarded:
		return "Guarded"
	default:
		return "Variant(" + strconv.Itoa(int(v)) + ")"
	}
}

// config is what Options set.
type config struct {
	variant         Variant
	timeout         time.Duration
	now             func() time.Time
	clock           redlock.Clock
	logger          *slog.Logger
	autoRefresh     bool
	refreshInterval time.Duration // 0: a third of the timeout
	newBackOff      func() backoff.BackOff
	guardWait       time.Duration
	lockOpts        []redlock.Option
}

func defaultConfig() config {
	return config{
		variant:    Atomic,
		timeout:    DefaultTimeout,
		now:        time.Now,
		clock:      redlock.SystemClock{},
		logger:     slog.New(slog.DiscardHandler),
		newBackOff: retry.Default,
		guardWait:  DefaultGuardWait,
	}
}

// Option configures a Semaphore. An unusable value makes New fail with
// ErrInvalidArgument.
type Option func(*config) error

// WithVariant selects the algorithm. Default Atomic. Basic, Fair and Guarded
// accept exactly one master.
func WithVariant(v Variant) Option {
	return func(c *config) error {
		if v < Atomic || v > Guarded {
			return invalid("unknown variant %d", int(v))
		}
		c.variant = v
		return nil
	}
}

// WithTimeout sets how long a permit lives without Refresh. Default
// DefaultTimeout (10 s); at least MinTimeout (100 ms), a whole number of
// milliseconds.
func WithTimeout(d time.Duration) Option {
	return func(c *config) error {
		switch {
		case d <= 0:
			return invalid("timeout %v is not positive", d)
		case d < MinTimeout:
			return invalid("timeout %v is below the minimum %v", d, MinTimeout)
		case d%time.Millisecond != 0:
			return invalid("timeout %v is not a whole number of milliseconds", d)
		}
		c.timeout = d
		return nil
	}
}

// WithNow sets the wall clock Basic and Fair (and Guarded) score permits
// with, as the book's clients do with their own clocks. Default time.Now.
// Atomic ignores it: it scores with the server's TIME.
func WithNow(now func() time.Time) Option {
	return func(c *config) error {
		if now == nil {
			return invalid("nil now func")
		}
		c.now = now
		return nil
	}
}

// WithClock injects the monotonic time source of local deadlines (a
// permit's validity, auto-refresh, Acquire's backoff timers). Default
// redlock.SystemClock. It is also given to the redlock clients a Guarded or
// multi-master Atomic semaphore uses.
func WithClock(clk redlock.Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return invalid("nil clock")
		}
		c.clock = clk
		return nil
	}
}

// WithLogger sets the logger. Default: discard everything. Permit
// identifiers (the secret that releases a permit) are never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return invalid("nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithAutoRefresh refreshes every permit every third of the timeout until it
// is released, like the lock's WithAutoExtend. A refresh that finds the
// permit lost ends it: Done closes and Context is cancelled with an error
// matching ErrLost. A refresh that gets no answer in time is retried every
// twelfth of the timeout while the permit is still valid; if none succeeds,
// the permit ends when its validity runs out.
func WithAutoRefresh() Option {
	return func(c *config) error { c.autoRefresh = true; return nil }
}

// WithAutoRefreshInterval is WithAutoRefresh refreshing every d instead; d
// must be positive and shorter than the timeout.
func WithAutoRefreshInterval(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("auto-refresh interval %v is not positive", d)
		}
		c.autoRefresh, c.refreshInterval = true, d
		return nil
	}
}

// WithRetry sets the backoff policy Acquire uses between attempts when no
// release notification wakes it; newBackOff is called once per Acquire.
// backoff.Stop ends the wait with the last attempt's error. Default:
// jittered exponential from 10 ms up to 500 ms.
func WithRetry(newBackOff func() backoff.BackOff) Option {
	return func(c *config) error {
		if newBackOff == nil {
			return invalid("nil backoff constructor")
		}
		c.newBackOff = newBackOff
		return nil
	}
}

// WithGuardWait sets how long a Guarded attempt waits for its guard lock
// before reporting ErrBusy. Default DefaultGuardWait (100 ms). Other
// variants ignore it.
func WithGuardWait(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("guard wait %v is not positive", d)
		}
		c.guardWait = d
		return nil
	}
}

// WithLockOptions passes options to the redlock.Client a Guarded semaphore
// (its guard lock) or a multi-master Atomic semaphore (its slots) builds,
// e.g. redlock.WithQuarantine. WithClock is passed on already.
func WithLockOptions(opts ...redlock.Option) Option {
	return func(c *config) error {
		for _, o := range opts {
			if o == nil {
				return invalid("nil lock option")
			}
		}
		c.lockOpts = append(c.lockOpts, opts...)
		return nil
	}
}
