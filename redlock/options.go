package redlock

import (
	"log/slog"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/quorumlock/quorumlock/internal/retry"
)

// Defaults of a Client. Each can be changed with an Option.
const (
	// DefaultDriftFactor is the share of the TTL reserved for clock drift
	// between the client and the masters (antirez's 0.01).
	DefaultDriftFactor = 0.01
	// DefaultMaxInFlight bounds the commands to one master still waiting for
	// an answer. A stalled master cannot collect more goroutines than this.
	DefaultMaxInFlight = 1024
	// DefaultCleanupHorizon is how long after a failed attempt the client keeps
	// retrying the owner-checked delete on masters whose answer is unknown.
	DefaultCleanupHorizon = time.Minute
	// DefaultFenceBuckets is how many fencing counters each master keeps
	// (WithFenceBuckets): every key's tokens come from one of them.
	DefaultFenceBuckets = 1024
	// maxFenceBuckets bounds WithFenceBuckets.
	maxFenceBuckets = 1 << 16
)

// config is what Options set.
type config struct {
	driftFactor    float64
	masterTimeout  time.Duration // 0: derived from the TTL
	newBackOff     func() backoff.BackOff
	logger         *slog.Logger
	clock          Clock
	fencing        bool
	quarantine     bool
	quarantineMin  time.Duration
	quarantineSet  bool // WithQuarantine or WithoutQuarantine was given
	tolerance      int  // WithDataLossTolerance's f
	maxInFlight    int
	cleanupHorizon time.Duration
	notifications  bool
	observer       Observer
	buckets        int
}

func defaultConfig() config {
	return config{
		driftFactor:    DefaultDriftFactor,
		newBackOff:     retry.Default,
		logger:         slog.New(slog.DiscardHandler),
		clock:          SystemClock{},
		fencing:        true,
		quarantine:     true,
		maxInFlight:    DefaultMaxInFlight,
		cleanupHorizon: DefaultCleanupHorizon,
		notifications:  true,
		observer:       NopObserver{},
		buckets:        DefaultFenceBuckets,
	}
}

// Option configures a Client. An unusable value makes New fail with
// ErrInvalidArgument.
type Option func(*config) error

// WithDriftFactor sets the share of the TTL subtracted from a lease's validity
// for clock drift. Default DefaultDriftFactor (0.01); must be in [0, 0.5).
func WithDriftFactor(f float64) Option {
	return func(c *config) error {
		if !(f >= 0 && f < 0.5) {
			return invalid("drift factor %v is outside [0, 0.5)", f)
		}
		c.driftFactor = f
		return nil
	}
}

// WithMasterTimeout fixes how long an operation waits for any one master.
// Default: a tenth of the TTL, at least 50 ms and at most 1 s. A lock
// whose TTL is not larger than this timeout fails with ErrInvalidArgument.
func WithMasterTimeout(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("master timeout %v is not positive", d)
		}
		c.masterTimeout = d
		return nil
	}
}

// WithRetry sets the backoff policy Lock uses between attempts; newBackOff is
// called once per Lock call. backoff.Stop ends the wait with the last
// attempt's error. Default: jittered exponential from 10 ms up to 500 ms.
func WithRetry(newBackOff func() backoff.BackOff) Option {
	return func(c *config) error {
		if newBackOff == nil {
			return invalid("nil backoff constructor")
		}
		c.newBackOff = newBackOff
		return nil
	}
}

// WithLogger sets the logger. Default: discard everything. Lock values are
// never logged.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return invalid("nil logger")
		}
		c.logger = l
		return nil
	}
}

// WithClock injects the time source. Default SystemClock.
func WithClock(clk Clock) Option {
	return func(c *config) error {
		if clk == nil {
			return invalid("nil clock")
		}
		c.clock = clk
		return nil
	}
}

// WithFencing turns fencing tokens on or off. Default on: an acquisition takes
// a second round trip to write its token back to a majority (docs/fencing.md).
// Off, leases carry the zero Token and an acquisition is one round trip.
func WithFencing(on bool) Option {
	return func(c *config) error { c.fencing = on; return nil }
}

// WithQuarantine sets the shortest quarantine of a restarted master. The
// quarantine Λ is the longer of d and the longest TTL this client has used.
// A master without appendonly yes + appendfsync always does not vote while
// its uptime is below Λ (checked on every probe, so a client that starts
// using a longer TTL also waits for masters younger than it); a master that
// lost its data waits Λ from when that is seen; and a master that lost its
// data, or restarted without appendfsync always, has its fencing counters
// raised from the others before it votes. Default 0 (the longest TTL used).
// Set d to the longest TTL any client of the same keys uses.
func WithQuarantine(d time.Duration) Option {
	return func(c *config) error {
		if d < 0 {
			return invalid("quarantine %v is negative", d)
		}
		c.quarantine, c.quarantineMin, c.quarantineSet = true, d, true
		return nil
	}
}

// WithoutQuarantine lets restarted masters vote at once. This is unsafe when
// masters run without persistence (the Redlock page's own counterexample);
// it exists for the fault suite, which shows what quarantine prevents, and
// for embedded masters that never restart.
func WithoutQuarantine() Option {
	return func(c *config) error { c.quarantine, c.quarantineSet = false, true; return nil }
}

// WithDataLossTolerance makes the Client safe when at most f masters lose
// data (a restart without appendfsync always, a FLUSHALL, a rollback to an
// older snapshot, a failover to a lagging replica) within a lease's span
// (from the first request of its attempt until it has ended and the key's
// next lease is acquired), without detecting any of it: the quorum becomes
// ⌊(M+f)/2⌋ + 1, so any two quorums share at least f+1 masters and one of
// them kept the earlier lease's key and fencing counter (docs/safety.md;
// checked in the SPIN model fencing/model/tolerant.pml). With f > 0 the restart
// quarantine is not needed and is off: no probes decide a vote, restarted
// masters vote at once, and WithQuarantine or WithoutQuarantine beside it is
// an error. The price is availability: five masters with f = 1 need four
// votes and tolerate one failed master instead of two. Default 0 (a
// majority, with the restart quarantine).
//
// New returns an error matching ErrInvalidArgument when f is negative or the
// quorum it needs is larger than the number of masters.
func WithDataLossTolerance(f int) Option {
	return func(c *config) error {
		if f < 0 {
			return invalid("data-loss tolerance %d is negative", f)
		}
		c.tolerance = f
		return nil
	}
}

// WithFenceBuckets sets how many fencing counters each master keeps: a key's
// tokens come from counter FNV-1a(key) mod n, which only grows, so tokens
// still grow strictly for every key, no token is handed out twice within a
// bucket (with n = 1: among all keys), and the masters hold n counters
// however many distinct keys are locked (docs/fencing.md). Every client of the same
// masters must use the same n: an acquire against masters whose clients use
// another n fails with an error reply naming both. Default
// DefaultFenceBuckets (1024); n must be in [1, 65536].
func WithFenceBuckets(n int) Option {
	return func(c *config) error {
		if n < 1 || n > maxFenceBuckets {
			return invalid("fence buckets %d outside [1, %d]", n, maxFenceBuckets)
		}
		c.buckets = n
		return nil
	}
}

// WithMaxInFlight bounds the commands to one master still waiting for an
// answer. Default DefaultMaxInFlight (1024).
func WithMaxInFlight(n int) Option {
	return func(c *config) error {
		if n < 1 {
			return invalid("max in flight %d is below 1", n)
		}
		c.maxInFlight = n
		return nil
	}
}

// WithCleanupHorizon sets how long after a failed attempt or release the
// owner-checked delete is retried on masters that did not answer (their
// queued SET may apply later, e.g. after SIGCONT). Default
// DefaultCleanupHorizon (1 min), and never less than the TTL.
func WithCleanupHorizon(d time.Duration) Option {
	return func(c *config) error {
		if d <= 0 {
			return invalid("cleanup horizon %v is not positive", d)
		}
		c.cleanupHorizon = d
		return nil
	}
}

// WithObserver reports every acquire, extend and release, every lost lease
// and every master entering or leaving quarantine to o (see Observer and
// Event; adapters: redlock/observe/promobserver, otelobserver). Default:
// NopObserver. Observers(a, b) fans out to several.
func WithObserver(o Observer) Option {
	return func(c *config) error {
		if o == nil {
			return invalid("nil observer")
		}
		c.observer = o
		return nil
	}
}

// WithReleaseNotifications turns on or off the pub/sub wake-up of Lock
// waiters on release. Default on; off, waiters rely on backoff alone.
func WithReleaseNotifications(on bool) Option {
	return func(c *config) error { c.notifications = on; return nil }
}

// lockConfig is what LockOptions set.
type lockConfig struct {
	autoExtend     bool
	extendInterval time.Duration // 0: a third of the TTL
	// shared is set by Resume, never by an option: the lease's value may
	// be held by another Lease too (see Lease.shared).
	shared bool
}

// LockOption configures one TryLock or Lock call.
type LockOption func(*lockConfig) error

// WithAutoExtend renews the lease with its TTL every third of the TTL until it
// is released. The moment a renewal fails, the lease is lost: Done closes and
// Context is cancelled with the renewal's error (matching ErrLockLost or
// ErrNoQuorum).
func WithAutoExtend() LockOption {
	return func(c *lockConfig) error { c.autoExtend = true; return nil }
}

// WithAutoExtendInterval is WithAutoExtend renewing every d instead; d must be
// positive and shorter than the lease's validity.
func WithAutoExtendInterval(d time.Duration) LockOption {
	return func(c *lockConfig) error {
		if d <= 0 {
			return invalid("auto-extend interval %v is not positive", d)
		}
		c.autoExtend, c.extendInterval = true, d
		return nil
	}
}
