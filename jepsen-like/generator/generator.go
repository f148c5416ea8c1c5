package generator

import (
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"strings"
	"time"
)

// ErrInvalidArgument is wrapped by every configuration error.
var ErrInvalidArgument = errors.New("generator: invalid argument")

// The nemesis names, as the command line spells them.
const (
	None           = "none"
	Pause          = "pause"
	Kill           = "kill"
	Restart        = "restart"
	RestartAOF     = "restart-aof"
	RestartDelayed = "restart-delayed"
	Flush          = "flush"
	Failover       = "failover"
	Partition      = "partition"
	ClientPause    = "client-pause"
	SlowReplies    = "slow-replies"
	ClockJump      = "clock-jump"
	All            = "all"
)

// Names lists every nemesis name but none and all, in a fixed order.
var Names = []string{Pause, Kill, Restart, RestartAOF, RestartDelayed, Flush, Failover, Partition, ClientPause, SlowReplies, ClockJump}

// IsEpisode reports whether a fault is a targeted episode (see the package
// documentation).
func IsEpisode(name string) bool {
	switch name {
	case Restart, RestartAOF, RestartDelayed, Flush, Failover, ClockJump:
		return true
	}
	return false
}

// ParseNemeses parses a comma-separated LIST: names out of Names, "none" or
// "all". Duplicates are dropped; the order is kept.
func ParseNemeses(list string) ([]string, error) {
	var out []string
	for _, n := range strings.Split(list, ",") {
		n = strings.TrimSpace(n)
		switch {
		case n == None:
			continue
		case n == All:
			for _, a := range Names {
				if !slices.Contains(out, a) {
					out = append(out, a)
				}
			}
		case slices.Contains(Names, n):
			if !slices.Contains(out, n) {
				out = append(out, n)
			}
		default:
			return nil, fmt.Errorf("%w: unknown nemesis %q (want a comma-separated list of none, all, %s)", ErrInvalidArgument, n, strings.Join(Names, ", "))
		}
	}
	return out, nil
}

// Config is what a schedule depends on.
type Config struct {
	Nemeses  []string      // parsed names (ParseNemeses)
	Masters  int           // number of masters, at least 3
	Clients  int           // number of client slots, at least 2
	Duration time.Duration // length of the run
	TTL      time.Duration // the workload's lock TTL
	Seed     uint64
	// MajorityDown makes pause and kill hit a majority of masters instead of
	// a minority (the "majority down" row).
	MajorityDown bool
}

// Step is one fault of a schedule.
type Step struct {
	// After is the quiet gap before the step, from the end of the previous
	// step (or the start of the run).
	After time.Duration `json:"after_ns"`
	Fault string        `json:"fault"`
	// Masters the fault hits (for an episode: the one master of Majority).
	Masters []int `json:"masters,omitempty"`
	// Slots are the client slots it hits (partition, slow-replies); for an
	// episode, the one slot that competes for the hold.
	Slots []int `json:"slots,omitempty"`
	// Hold is how long the fault lasts (episodes: the longest wait for a hold).
	Hold time.Duration `json:"hold_ns"`
	// Majority is, for an episode, the masters the holder is confined to;
	// for a partition, Cut[i] are the masters slot Slots[i] cannot reach.
	Majority []int   `json:"majority,omitempty"`
	Cut      [][]int `json:"cut,omitempty"`
	// Settle is, for an episode, how long after the confinement starts a
	// holder's attempt must begin: keys placed outside the majority before
	// it (by holders whose release did not reach them) have expired by then.
	Settle time.Duration `json:"settle_ns,omitempty"`
	// Delay is the reply delay of slow-replies; the offset of clock-jump.
	Delay time.Duration `json:"delay_ns,omitempty"`
}

// Schedule is a seeded plan of a run.
type Schedule struct {
	Seed  uint64 `json:"seed"`
	Steps []Step `json:"steps"`
	// Lifetimes[s] are the successive lifetimes of the processes of slot s.
	Lifetimes [][]time.Duration `json:"lifetimes_ns"`
}

// Generate returns the schedule of cfg.
func Generate(cfg Config) (Schedule, error) {
	switch {
	case cfg.Masters < 3:
		return Schedule{}, fmt.Errorf("%w: %d masters, need at least 3", ErrInvalidArgument, cfg.Masters)
	case cfg.Clients < 2:
		return Schedule{}, fmt.Errorf("%w: %d clients, need at least 2", ErrInvalidArgument, cfg.Clients)
	case cfg.TTL <= 0:
		return Schedule{}, fmt.Errorf("%w: TTL %v must be positive", ErrInvalidArgument, cfg.TTL)
	case cfg.Duration < 2*cfg.TTL:
		return Schedule{}, fmt.Errorf("%w: run time %v shorter than two TTLs (%v)", ErrInvalidArgument, cfg.Duration, 2*cfg.TTL)
	}
	rng := rand.New(rand.NewPCG(cfg.Seed, cfg.Seed^0x9e3779b97f4a7c15))
	s := Schedule{Seed: cfg.Seed}
	ttl := cfg.TTL
	frac := func(lo, hi float64) time.Duration { return time.Duration((lo + rng.Float64()*(hi-lo)) * float64(ttl)) }

	for range cfg.Clients {
		var lives []time.Duration
		for total := time.Duration(0); total < cfg.Duration; {
			d := frac(3, 8)
			lives = append(lives, d)
			total += d
		}
		s.Lifetimes = append(s.Lifetimes, lives)
	}

	names := slices.Clone(cfg.Nemeses)
	rng.Shuffle(len(names), func(i, j int) { names[i], names[j] = names[j], names[i] })
	q := cfg.Masters/2 + 1
	// The planned time (gaps plus typical step lengths) decides how many
	// steps fit in the duration; every named fault runs at least once.
	var planned time.Duration
	gap := ttl + ttl/2 // warm-up: the first holds, and fresh masters' quarantine
	for i := 0; len(names) > 0; i++ {
		name := names[i%len(names)]
		perm := rng.Perm(cfg.Masters)
		st := Step{After: gap, Fault: name}
		gap = ttl
		var length time.Duration // typical length of the step
		switch {
		case IsEpisode(name):
			st.Majority = slices.Sorted(slices.Values(perm[:q]))
			st.Masters = []int{perm[0]}
			st.Slots = []int{rng.IntN(cfg.Clients)} // the candidate holder
			st.Hold = 5 * ttl                       // the longest wait for a holder
			st.Settle = ttl + ttl/10
			if name == ClockJump {
				st.Delay = 2 * ttl
			}
			// settle, a hold comes soon, lingers about a TTL; the next step
			// waits until the restarted master's quarantine is over
			length = st.Settle + ttl + ttl/2
			if name == RestartDelayed {
				length += ttl
			}
			gap = ttl + ttl/2
		case name == Pause || name == Kill:
			n := 1 + rng.IntN(cfg.Masters-q) // a minority
			if cfg.MajorityDown {
				n = q + rng.IntN(cfg.Masters-q+1)
			}
			st.Masters = slices.Sorted(slices.Values(perm[:n]))
			st.Hold = frac(0.5, 1.5)
			if name == Kill {
				st.Hold = frac(1.5, 2.5) // down past the TTL: a later start is no restart fault
			}
			length = st.Hold
		case name == Partition:
			for slot := range cfg.Clients {
				p := rng.Perm(cfg.Masters)
				st.Slots = append(st.Slots, slot)
				st.Cut = append(st.Cut, slices.Sorted(slices.Values(p[:cfg.Masters-q])))
			}
			st.Hold = frac(1, 2)
			length = st.Hold
		case name == SlowReplies:
			st.Slots = []int{rng.IntN(cfg.Clients)}
			st.Masters = slices.Sorted(slices.Values(perm[:1+rng.IntN(cfg.Masters)]))
			st.Delay = frac(0.05, 0.3)
			st.Hold = frac(1, 2)
			length = st.Hold
		case name == ClientPause:
			st.Slots = []int{rng.IntN(cfg.Clients)} // the one slot that competes
			st.Hold = 5 * ttl                       // the longest wait for a hold to pause
			length = 2*ttl + ttl/2
		}
		if planned+st.After+length > cfg.Duration && i >= len(names) {
			break
		}
		s.Steps = append(s.Steps, st)
		planned += st.After + length
	}
	return s, nil
}
