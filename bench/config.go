package bench

import (
	"errors"
	"fmt"
	"slices"
	"time"
)

// ErrInvalidArgument is matched (errors.Is) by every error that reports a
// bad Config.
var ErrInvalidArgument = errors.New("bench: invalid argument")

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// Library names, as they appear in rows and in Config.Libraries.
const (
	Quorumlock          = "quorumlock"           // redlock.New, defaults (fencing on, restart detection on), TryLock
	QuorumlockLock      = "quorumlock-lock"      // the same, Lock in every scenario (the call users make)
	QuorumlockNoFencing = "quorumlock-nofencing" // defaults with WithFencing(false)
	QuorumlockTolerant  = "quorumlock-f1"        // WithDataLossTolerance(1): quorum 4 of 5, no restart detection
	QuorumlockB16       = "quorumlock-b16"       // defaults with WithFenceBuckets(16): keys share few counters
	QuorumlockB65536    = "quorumlock-b65536"    // defaults with WithFenceBuckets(65536): about a counter per key here
	Redsync             = "redsync"              // redsync/v4, goredis v9 pools, its defaults
	RedsyncFailFast     = "redsync-failfast"     // the same with WithFailFast(true)
	Redislock           = "redislock"            // bsm/redislock on the first master only
	Raw                 = "raw"                  // SET NX PX + DEL with plain go-redis, wait for a majority
)

// Libraries lists every library in report order.
var Libraries = []string{Quorumlock, QuorumlockLock, QuorumlockNoFencing, QuorumlockTolerant, QuorumlockB16, QuorumlockB65536, Redsync, RedsyncFailFast, Redislock, Raw}

// Scenario is one load shape.
type Scenario struct {
	Name        string
	Goroutines  int  // concurrent workers
	Clients     int  // lockers the workers are spread over, as separate processes would be (0: one)
	Stalled     int  // masters SIGSTOPped for the whole window (the last ones)
	CtxTimeouts bool // go-redis clients built with ContextTimeoutEnabled
	HotKey      bool // all workers Lock one key, hold it CriticalSection, release
}

// CriticalSection is how long a hot-key holder keeps the lock (time.Sleep).
const CriticalSection = 100 * time.Microsecond

// Scenarios lists every scenario in report order.
var Scenarios = []Scenario{
	{Name: "uncontended-1", Goroutines: 1},
	{Name: "uncontended-16", Goroutines: 16},
	{Name: "uncontended-64", Goroutines: 64},
	{Name: "stall1-defaults", Goroutines: 16, Stalled: 1},
	{Name: "stall1-ctxtimeout", Goroutines: 16, Stalled: 1, CtxTimeouts: true},
	{Name: "stall2-defaults", Goroutines: 16, Stalled: 2},
	{Name: "stall2-ctxtimeout", Goroutines: 16, Stalled: 2, CtxTimeouts: true},
	{Name: "hotkey-8", Goroutines: 8, HotKey: true},
	{Name: "hotkey-32", Goroutines: 32, HotKey: true},
	{Name: "hotkey-32x4", Goroutines: 32, Clients: 4, HotKey: true},
}

// Config says what Run measures.
type Config struct {
	// Duration is each scenario's measuring window. Default 2 s.
	Duration time.Duration
	// MaxOps ends a scenario's window early once this many operations
	// (lock+unlock pairs) completed. Default 2,000,000.
	MaxOps int
	// TTL of every lock, the same for every library. Default 10 s.
	TTL time.Duration
	// Libraries to run (names above). Default: all.
	Libraries []string
	// Scenarios to run, by name. Default: all.
	Scenarios []string
	// Repeat runs every library this many times in each scenario, taking
	// turns (A B C A B C ...), so that a drift of the machine's speed falls
	// on every library alike; Summary then reports each one's medians.
	// Default 1.
	Repeat int
	// Progress, when set, receives one line per scenario, library and
	// repetition.
	Progress func(string)
}

const (
	defaultDuration = 2 * time.Second
	defaultMaxOps   = 2_000_000
	defaultTTL      = 10 * time.Second
)

// withDefaults fills unset fields and checks the rest. It returns errors
// matching ErrInvalidArgument.
func (c Config) withDefaults() (Config, []Scenario, error) {
	if c.Duration == 0 {
		c.Duration = defaultDuration
	}
	if c.MaxOps == 0 {
		c.MaxOps = defaultMaxOps
	}
	if c.TTL == 0 {
		c.TTL = defaultTTL
	}
	if c.Repeat == 0 {
		c.Repeat = 1
	}
	switch {
	case c.Duration < 0 || c.Duration > 10*time.Minute:
		return c, nil, invalid("duration %v is outside (0, 10m]", c.Duration)
	case c.MaxOps < 0:
		return c, nil, invalid("max ops %d is negative", c.MaxOps)
	case c.TTL < 500*time.Millisecond:
		return c, nil, invalid("ttl %v is below 500ms", c.TTL)
	case c.Repeat < 0 || c.Repeat > 100:
		return c, nil, invalid("repeat %d is outside [1, 100]", c.Repeat)
	}
	if len(c.Libraries) == 0 {
		c.Libraries = Libraries
	}
	for _, l := range c.Libraries {
		if !slices.Contains(Libraries, l) {
			return c, nil, invalid("unknown library %q (known: %v)", l, Libraries)
		}
	}
	var scs []Scenario
	if len(c.Scenarios) == 0 {
		scs = Scenarios
	}
	for _, name := range c.Scenarios {
		i := slices.IndexFunc(Scenarios, func(s Scenario) bool { return s.Name == name })
		if i < 0 {
			return c, nil, invalid("unknown scenario %q", name)
		}
		scs = append(scs, Scenarios[i])
	}
	return c, scs, nil
}
