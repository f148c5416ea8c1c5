package generator

import (
	"cmp"
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
	Bridge         = "bridge"
	Ring           = "ring"
	NetPartition   = "net-partition"
	ClientPause    = "client-pause"
	SlowReplies    = "slow-replies"
	SlowExtend     = "slow-extend"
	AcquirePause   = "acquire-pause"
	StaleCache     = "stale-cache"
	ClockJump      = "clock-jump"
	DataLoss       = "data-loss"
	RestartLong    = "restart-long"
	// RestartLongMerged is restart-long with the candidate's hold sent to
	// each master in one call with another acquire of its client, through
	// the script of merged acquires (redlock/merge.go).
	RestartLongMerged = "restart-long-merged"
	All               = "all"
)

// Names lists every nemesis name but none and all, in a fixed order.
var Names = []string{Pause, Kill, Restart, RestartAOF, RestartDelayed, Flush, Failover, Partition, Bridge, Ring, NetPartition, ClientPause, SlowReplies, ClockJump, DataLoss, SlowExtend, AcquirePause, StaleCache, RestartLong, RestartLongMerged}

// The ways the data-loss nemesis makes a master lose data (Step.Kinds).
const (
	LossFlush    = "flush"    // FLUSHALL
	LossRestart  = "restart"  // kill, start empty (no persistence)
	LossSnapshot = "snapshot" // kill, start from an RDB saved before the hold
	LossFailover = "failover" // kill, replace by a replica detached before the hold
)

// LossKinds lists every data-loss kind, in a fixed order.
var LossKinds = []string{LossFlush, LossRestart, LossSnapshot, LossFailover}

// IsEpisode reports whether a fault is a targeted episode (see the package
// documentation).
func IsEpisode(name string) bool {
	switch name {
	case Restart, RestartAOF, RestartDelayed, Flush, Failover, ClockJump, DataLoss:
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
	// Quorum is the size of the set S an episode confines the holder to:
	// the clients' quorum, so that the hold is on as few masters as they
	// accept. Default: a majority, Masters/2+1.
	Quorum int
	// LossMasters is the f of the data-loss nemesis: at most that many
	// distinct masters lose data within any LossWindow (see Step.MaxLost).
	// Default 1; at most Quorum.
	LossMasters int
	// LossKinds are the kinds data-loss chooses among. Default LossKinds.
	LossKinds []string
}

// LossWindow is the window of the data-loss fault model for a TTL: a lease
// lives less than one TTL from the start of the attempt that took it (its
// validity ends before), so two TTLs cover every lease with a margin.
func LossWindow(ttl time.Duration) time.Duration { return 2 * ttl }

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
	// For stale-cache, Masters are the masters cut off from every slot but
	// Slots[0] while the others lock, Cut[0] those Slots[0] cannot reach
	// when it locks again.
	Majority []int   `json:"majority,omitempty"`
	Cut      [][]int `json:"cut,omitempty"`
	// Settle is, for an episode, how long after the confinement starts a
	// holder's attempt must begin: keys placed outside the majority before
	// it (by holders whose release did not reach them) have expired by then.
	Settle time.Duration `json:"settle_ns,omitempty"`
	// Delay is the reply delay of slow-replies; the offset of clock-jump.
	Delay time.Duration `json:"delay_ns,omitempty"`
	// For data-loss, Masters are the masters of Majority that lose data, in
	// order, Kinds[i] how Masters[i] loses it, Offsets[i] the wait before
	// it; MaxLost and Window the fault model: at most MaxLost distinct
	// masters lose data within any Window (the nemesis waits rather than
	// exceed it).
	Kinds   []string        `json:"kinds,omitempty"`
	Offsets []time.Duration `json:"offsets_ns,omitempty"`
	MaxLost int             `json:"max_lost,omitempty"`
	Window  time.Duration   `json:"window_ns,omitempty"`
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
	case cfg.Quorum != 0 && (cfg.Quorum <= cfg.Masters/2 || cfg.Quorum > cfg.Masters):
		return Schedule{}, fmt.Errorf("%w: quorum %d of %d masters (want a majority, at most all)", ErrInvalidArgument, cfg.Quorum, cfg.Masters)
	}
	quorum := cmp.Or(cfg.Quorum, cfg.Masters/2+1)
	lossF := cmp.Or(cfg.LossMasters, 1)
	kinds := cfg.LossKinds
	if kinds == nil {
		kinds = LossKinds
	}
	switch {
	case lossF < 0 || lossF > quorum:
		return Schedule{}, fmt.Errorf("%w: data-loss on %d masters: want 1 to the quorum, %d", ErrInvalidArgument, lossF, quorum)
	case len(kinds) == 0:
		return Schedule{}, fmt.Errorf("%w: no data-loss kind", ErrInvalidArgument)
	}
	for _, k := range kinds {
		if !slices.Contains(LossKinds, k) {
			return Schedule{}, fmt.Errorf("%w: unknown data-loss kind %q (want %s)", ErrInvalidArgument, k, strings.Join(LossKinds, ", "))
		}
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
	var deck []string  // data-loss kinds not dealt yet
	gap := ttl + ttl/2 // warm-up: the first holds, and fresh masters' quarantine
	for i := 0; len(names) > 0; i++ {
		name := names[i%len(names)]
		perm := rng.Perm(cfg.Masters)
		st := Step{After: gap, Fault: name}
		gap = ttl
		var length time.Duration // typical length of the step
		switch {
		case IsEpisode(name):
			st.Majority = slices.Sorted(slices.Values(perm[:quorum]))
			st.Masters = []int{perm[0]}
			st.Slots = []int{rng.IntN(cfg.Clients)} // the candidate holder
			st.Hold = 5 * ttl                       // the longest wait for a holder
			st.Settle = ttl + ttl/10
			if name == ClockJump {
				st.Delay = 2 * ttl
			}
			if name == DataLoss {
				// 1 to f masters of S, in a seeded order, each at a seeded
				// time in its first fifth of a TTL after the previous one;
				// the kinds come from a shuffled deck, so that a few steps
				// use every kind.
				k := 1 + rng.IntN(lossF)
				st.Masters = slices.Clone(perm[:k])
				for range k {
					if len(deck) == 0 {
						deck = slices.Clone(kinds)
						rng.Shuffle(len(deck), func(i, j int) { deck[i], deck[j] = deck[j], deck[i] })
					}
					st.Kinds, deck = append(st.Kinds, deck[0]), deck[1:]
					st.Offsets = append(st.Offsets, frac(0, 0.2))
				}
				st.MaxLost, st.Window = lossF, LossWindow(ttl)
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
		case name == Bridge || name == Ring:
			st.Slots, st.Cut = topology(name, rng.Perm(cfg.Clients), perm, q)
			st.Hold = frac(1, 2)
			length = st.Hold
		case name == NetPartition:
			// a minority of masters cut off the network, from every client
			// and from each other
			st.Masters = slices.Sorted(slices.Values(perm[:1+rng.IntN(cfg.Masters-q)]))
			st.Hold = frac(1, 2)
			length = st.Hold
		case name == SlowReplies:
			st.Slots = []int{rng.IntN(cfg.Clients)}
			st.Masters = slices.Sorted(slices.Values(perm[:1+rng.IntN(cfg.Masters)]))
			st.Delay = frac(0.05, 0.3)
			st.Hold = frac(1, 2)
			length = st.Hold
		case name == SlowExtend:
			// The next holder of a seeded slot: every master's replies to
			// it are delayed past the per-master timeout (a tenth of the
			// TTL) while it extends its lease, so the extend fails on time
			// though every master applied it.
			st.Slots = []int{rng.IntN(cfg.Clients)}
			st.Masters = slices.Sorted(slices.Values(perm))
			st.Delay = frac(0.15, 0.3)
			st.Hold = 5 * ttl // the longest wait for a hold
			length = 2 * ttl
		case name == AcquirePause:
			// The next acquisition of a seeded slot stops after its rounds,
			// until its keys expired and another process holds the lock.
			st.Slots = []int{rng.IntN(cfg.Clients)}
			st.Hold = 5 * ttl // the longest wait for an acquisition to stop
			length = 3 * ttl
		case name == StaleCache:
			// A long-lived client of a seeded slot locks once; then the
			// masters Masters (as many as a minority allows, at most q−1)
			// are cut off from the other slots while they lock twice; then
			// the slot, cut off from Cut[0], locks alone on the q masters
			// left: q−1 or fewer of them missed the newer tokens.
			st.Slots = []int{rng.IntN(cfg.Clients)}
			behind := min(quorum-1, cfg.Masters-quorum)
			st.Masters = slices.Sorted(slices.Values(perm[:behind]))
			st.Cut = [][]int{slices.Sorted(slices.Values(perm[behind : behind+cfg.Masters-quorum]))}
			st.Hold = 5 * ttl // the longest wait for each of its steps
			length = 3 * ttl
		case name == RestartLong || name == RestartLongMerged:
			length = restartLongStep(&st, perm, quorum, rng.IntN(cfg.Clients), ttl)
			gap = ttl + ttl/2
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

// topology is the cut of a bridge or ring partition (Jepsen's shapes,
// applied to what each client reaches): slots, in a seeded order, and
// cut[i], the masters slot slots[i] cannot reach, with masters in the
// seeded order ring and q a bare majority.
//
// bridge: the first half of the slots reaches ring[:q], the second half
// ring[M-q:]; the two majorities share 2q-M masters (one, for an odd M),
// the bridge, which alone sees every client.
//
// ring: the masters stand in a ring; the k-th slot reaches the q
// consecutive masters from ring[k mod M], so that neighbours share most of
// their majority; with at least M-q+1 clients (3 of 5 masters) no master
// is reached by every client.
func topology(name string, slots, ring []int, q int) ([]int, [][]int) {
	m := len(ring)
	cut := make([][]int, len(slots))
	for k := range slots {
		var reach []int
		switch {
		case name == Bridge && k < (len(slots)+1)/2:
			reach = ring[:q]
		case name == Bridge:
			reach = ring[m-q:]
		default:
			for j := range q {
				reach = append(reach, ring[(k+j)%m])
			}
		}
		for _, i := range ring {
			if !slices.Contains(reach, i) {
				cut[k] = append(cut[k], i)
			}
		}
		slices.Sort(cut[k])
	}
	return slots, cut
}
