package probe

import (
	"fmt"
	"time"
)

// Kind says whether a master votes now, and if not, why.
type Kind int

// The kinds of State.Verdict, in the order they are checked.
const (
	Votes           Kind = iota // its vote counts
	Unreachable                 // its last probe failed
	NotProbed                   // no probe has answered yet
	Replica                     // it answers as a replica (role:slave)
	DataLost                    // it lost its data: no epoch marker, or a new one
	Promoted                    // a promoted replica not yet synced
	Restarted                   // not durable, restarted since its counters were complete
	Young                       // not durable, started less than the longest TTL ago
	RaisingCounters             // out of its time quarantine, counters not raised yet
)

// State is what one client knows of one master across probes. The zero
// value is a master never probed. States are values: Observe and friends
// return the next one.
type State struct {
	Probed   bool
	Err      error // the last probe's error; nil when it answered
	RunID    string
	Epoch    string // the epoch marker trusted; "" while none is
	Durable  bool
	Role     string
	Replicas int

	// StartedAt is the latest moment the master's process may have started,
	// on the local clock (uptime is whole seconds, the true uptime up to a
	// second longer): its young rule ends at StartedAt + the longest TTL,
	// which errs on the safe side.
	StartedAt time.Time
	// Lost is DataLost or Promoted while a loss first seen at LostAt waits
	// out its quarantine (the longest TTL from LostAt); Votes when none.
	Lost   Kind
	LostAt time.Time
	// NeedSync says its fencing counters must be raised from the other
	// masters before it votes.
	NeedSync bool
}

// Observe folds a successful probe taken at now into the state.
//
// The rule, argued in docs/safety.md and docs/fencing.md:
//   - no epoch marker: the master lost its data (or was never used): it is
//     quarantined for the longest TTL from when that is first seen, whatever
//     its durability or uptime, and its counters are raised before it votes
//     (a fresh cluster, where no master has a marker, is bootstrapped
//     instead: see Bootstrapped);
//   - a marker other than the one trusted: it lost its data since, and was
//     marked again by another client: the same quarantine from now;
//   - a promoted replica (second_repl_offset >= 0) whose counters were not
//     completed under its own run_id: it may lack the last keys and counter
//     raises of the old master, and when it was promoted is unknown: the same
//     quarantine from now, and a counter sync;
//   - not durable and restarted since its counters were last completed (the
//     synced run_id is another process's): it may have come back from an
//     older state: it waits until its process is as old as the longest TTL,
//     and its counters are raised;
//   - not durable and younger than the longest TTL: it waits until it is
//     that old (uptime tells when its data could have been lost).
//
// A durable master (appendonly yes, appendfsync always) that restarted loses
// nothing acknowledged and votes at once.
func (s State) Observe(info Info, now time.Time) State {
	n := s
	n.Probed, n.Err = true, nil
	n.RunID, n.Durable, n.Role, n.Replicas = info.RunID, info.Durable(), info.Role, info.Replicas
	n.StartedAt = now.Add(-info.Uptime)
	complete := info.Synced == info.RunID
	switch {
	case info.Epoch == "":
		if s.Epoch != "" || !s.Probed || s.Lost != DataLost {
			n.Lost, n.LostAt = DataLost, now
		}
		n.Epoch, n.NeedSync = "", true
	case s.Epoch != "" && info.Epoch != s.Epoch:
		n.Lost, n.LostAt = DataLost, now
		n.Epoch, n.NeedSync = info.Epoch, !complete
	case info.Promoted && !complete:
		if s.Lost != Promoted || s.RunID != info.RunID {
			n.Lost, n.LostAt = Promoted, now
		}
		n.Epoch, n.NeedSync = info.Epoch, true
	case !complete && !n.Durable:
		n.Epoch, n.NeedSync = info.Epoch, true
	default:
		// Its counters are complete: completed under this very process (by
		// us, another client or a bootstrap), or durable and not promoted.
		n.Epoch, n.NeedSync = info.Epoch, false
	}
	return n
}

// Failed records a failed probe: the master does not vote until a probe
// answers again. What was learned before is kept.
func (s State) Failed(err error) State {
	s.Err = err
	return s
}

// Synced records that the master's counters were raised and its marker set
// (epoch) by this client.
func (s State) Synced(epoch string) State {
	s.Epoch, s.NeedSync = epoch, false
	return s
}

// Bootstrapped records that the master belongs to a fresh cluster (every
// master answered and none carried a marker) and now carries epoch: its
// missing marker was no loss. The young rule still applies.
func (s State) Bootstrapped(epoch string) State {
	s.Epoch, s.NeedSync = epoch, false
	if s.Lost == DataLost {
		s.Lost, s.LostAt = Votes, time.Time{}
	}
	return s
}

// EpochChanged records that a vote came with a marker other than the one
// trusted: the master lost its data since the last probe. It is quarantined
// from now; a new marker is adopted by the next probe, with the synced run_id
// that comes with it.
func (s State) EpochChanged(now time.Time) State {
	s.Lost, s.LostAt = DataLost, now
	s.NeedSync, s.Epoch = true, ""
	return s
}

// Verdict is whether a master votes at a given moment and, if not, why.
type Verdict struct {
	Kind  Kind
	Since time.Time // when the reason began (loss seen, process start)
	Until time.Time // when a time quarantine ends; zero when not by time
	Cause error     // for Unreachable: the probe's error
	Now   time.Time // when the verdict was taken (for the countdown)
}

// Verdict says whether the master votes at now, with longest the longest
// TTL in use (the quarantine length).
func (s State) Verdict(now time.Time, longest time.Duration) Verdict {
	v := Verdict{Now: now}
	switch {
	case s.Err != nil && isReply(s.Err):
		v.Kind, v.Cause = NotProbed, s.Err // it answers, but refused the probe
	case s.Err != nil:
		v.Kind, v.Cause = Unreachable, s.Err
	case !s.Probed:
		v.Kind = NotProbed
	case s.Role == "slave":
		v.Kind = Replica
	case s.Lost != Votes && now.Before(s.LostAt.Add(longest)):
		v.Kind, v.Since, v.Until = s.Lost, s.LostAt, s.LostAt.Add(longest)
	case !s.Durable && now.Before(s.StartedAt.Add(longest)):
		v.Kind, v.Since, v.Until = Young, s.StartedAt, s.StartedAt.Add(longest)
		if s.NeedSync {
			v.Kind = Restarted
		}
	case s.NeedSync:
		v.Kind = RaisingCounters
	}
	return v
}

// Votes reports whether the verdict lets the master vote.
func (v Verdict) Votes() bool { return v.Kind == Votes }

// TimeQuarantine reports whether the master waits for the clock (as opposed
// to a probe or a counter sync).
func (v Verdict) TimeQuarantine() bool { return !v.Until.IsZero() }

// String explains the verdict for people, counting down from v.Now.
func (v Verdict) String() string {
	ago := func(t time.Time) string { return v.Now.Sub(t).Truncate(time.Second).String() }
	left := func() string {
		return fmt.Sprintf("votes from %s (in %s)", v.Until.Format("15:04:05"), v.Until.Sub(v.Now).Round(100*time.Millisecond))
	}
	switch v.Kind {
	case Votes:
		return "votes"
	case Unreachable:
		return fmt.Sprintf("unreachable (%s): %v", Cause(v.Cause), v.Cause)
	case NotProbed:
		if v.Cause != nil {
			return fmt.Sprintf("answers, but refused its probe: %v", v.Cause)
		}
		return "not probed yet"
	case Replica:
		return "answers as a replica (role:slave), not as a master"
	case DataLost:
		return fmt.Sprintf("lost its data (no or a new epoch marker, seen %s ago); %s, after its counters are raised", ago(v.Since), left())
	case Promoted:
		return fmt.Sprintf("a promoted replica (failover, seen %s ago) that may lack the old master's last keys; %s, after its counters are raised", ago(v.Since), left())
	case Restarted:
		return fmt.Sprintf("restarted %s ago without appendfsync always; %s, after its counters are raised", ago(v.Since), left())
	case Young:
		return fmt.Sprintf("young: started %s ago without appendfsync always; %s", ago(v.Since), left())
	case RaisingCounters:
		return "raising its fencing counters from the other masters"
	}
	return fmt.Sprintf("unknown state %d", v.Kind)
}
