package suite

import (
	"cmp"
	"errors"
	"fmt"
	"io"
	"log/slog"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
)

// ErrInvalidArgument is wrapped by every configuration error.
var ErrInvalidArgument = errors.New("suite: invalid argument")

// Backends.
const (
	Local  = "local"
	Docker = "docker"
)

// Config is one run. The zero values of the optional fields are the
// defaults documented on each.
type Config struct {
	Backend  string   // local or docker
	Workload string   // lock, register or semaphore
	Nemeses  []string // parsed with generator.ParseNemeses
	Time     time.Duration
	Clients  int
	Seed     uint64
	Out      string // output directory; "" writes nothing
	// NoQuarantine: redlock.WithoutQuarantine().
	NoQuarantine bool
	// NoFencing: redlock.WithFencing(false), and a store that checks no token.
	NoFencing bool
	// DataLossTolerance is the f of redlock.WithDataLossTolerance: a quorum
	// of ⌊(Masters+f)/2⌋+1 and no restart quarantine (NoQuarantine is then
	// implied). Default 0: a majority.
	DataLossTolerance int
	// DataLossMasters is the f of the data-loss nemesis: at most that many
	// distinct masters lose data within any two TTLs. Default
	// max(1, DataLossTolerance); at most the quorum.
	DataLossMasters int
	// BucketKeys runs that many extra processes (workload.BucketLoad), each
	// taking and releasing a key of its own in the fence bucket of the
	// workload's key, so that write-back rounds of several keys race for
	// one counter; the tokens checker then finds a token handed out twice
	// in the bucket. Default 0; needs fencing and a lock workload (lock,
	// register or set).
	BucketKeys int
	// Long: more clients (at least 10) and at least five minutes.
	Long bool
	// TTL of the locks. Default 1 s.
	TTL time.Duration
	// Masters. Default 5.
	Masters int
	// MajorityDown makes pause and kill hit a majority.
	MajorityDown bool
	// Store is the fenced store of the register workload. Default: an
	// in-memory fencing.MemoryStore. Ignored with NoFencing, which writes to
	// a store that checks no token.
	Store fencing.Store
	// Progress receives a progress bar (nil: none).
	Progress io.Writer
	// Logger for the suite's own diagnostics. Default: discard.
	Logger *slog.Logger
}

// Quorum is the clients' quorum: ⌊(Masters+DataLossTolerance)/2⌋+1 (with
// the default of 5 masters when Masters is 0).
func (c *Config) Quorum() int { return quorum.Size(cmp.Or(c.Masters, 5), c.DataLossTolerance) }

func (c *Config) normalize() error {
	if c.TTL == 0 {
		c.TTL = time.Second
	}
	if c.Masters == 0 {
		c.Masters = 5
	}
	if c.Long {
		c.Clients = max(c.Clients, 10)
		c.Time = max(c.Time, 5*time.Minute)
	}
	if c.DataLossMasters == 0 {
		c.DataLossMasters = max(1, c.DataLossTolerance)
	}
	if c.Logger == nil {
		c.Logger = slog.New(slog.DiscardHandler)
	}
	switch {
	case c.Backend != Local && c.Backend != Docker:
		return fmt.Errorf("%w: backend %q (want local or docker)", ErrInvalidArgument, c.Backend)
	case c.Clients < 2:
		return fmt.Errorf("%w: %d clients, need at least 2", ErrInvalidArgument, c.Clients)
	case c.Clients > 64:
		return fmt.Errorf("%w: %d clients, at most 64", ErrInvalidArgument, c.Clients)
	case c.Time < 2*c.TTL:
		return fmt.Errorf("%w: --time %v is shorter than two TTLs (%v)", ErrInvalidArgument, c.Time, 2*c.TTL)
	case c.Time > 24*time.Hour:
		return fmt.Errorf("%w: --time %v is longer than a day", ErrInvalidArgument, c.Time)
	case c.Masters < 3:
		return fmt.Errorf("%w: %d masters, need at least 3", ErrInvalidArgument, c.Masters)
	case c.DataLossTolerance < 0:
		return fmt.Errorf("%w: --data-loss-tolerance %d is negative", ErrInvalidArgument, c.DataLossTolerance)
	case c.DataLossTolerance > 0 && quorum.Check(c.Masters, c.DataLossTolerance) != nil:
		return fmt.Errorf("%w: --data-loss-tolerance: %v", ErrInvalidArgument, quorum.Check(c.Masters, c.DataLossTolerance))
	case c.BucketKeys < 0 || c.BucketKeys > 64:
		return fmt.Errorf("%w: --bucket-keys %d: want 0 to 64", ErrInvalidArgument, c.BucketKeys)
	case c.BucketKeys > 0 && (c.NoFencing || c.Workload == workload.Semaphore):
		return fmt.Errorf("%w: --bucket-keys needs fencing and a lock workload (lock, register or set)", ErrInvalidArgument)
	case c.DataLossMasters < 1 || c.DataLossMasters > c.Quorum():
		return fmt.Errorf("%w: --data-loss-masters %d: want 1 to the quorum, %d", ErrInvalidArgument, c.DataLossMasters, c.Quorum())
	}
	if err := workload.Check(c.Workload); err != nil {
		return err
	}
	for _, n := range c.Nemeses {
		if _, err := generator.ParseNemeses(n); err != nil {
			return err
		}
	}
	return nil
}
