package probe

import (
	"fmt"
	"time"
)

// Kind says whether a master counts by itself now, and if not, why.
type Kind int

// The kinds of a Verdict.
const (
	Votes           Kind = iota // certified: its yes counts
	Unreachable                 // its last probe failed
	NotProbed                   // no probe has answered yet
	Replica                     // it answers as a replica (role:slave)
	Duplicate                   // another master is the same server (the same master_replid)
	NotCertified                // no quorumlock record at all: a fresh master, or one that lost everything
	DataLost                    // records but no certificate: it lost its data, or a certification did not finish
	Restarted                   // certified under another process: a restart, or another server in its place
	Promoted                    // certified under another replication id: a promotion, failback or full resync (or a restart, until a probe reads the run_id)
	RaisingCounters             // its time quarantine is over; its counters are being raised
)

// Uncertified says why a probed master that does not count (Info.Certified
// is false) does not: the kind, judged from its certificate and records.
func Uncertified(i Info) Kind {
	switch c, ok := ParseCert(i.Cert); {
	case i.Role == "slave":
		return Replica
	case ok && i.RunID != "" && c.Lineage.RunID != i.RunID:
		return Restarted // a grant's INFO has no run_id: a restart seen there is a new replication id until a probe
	case ok && c.Lineage.ReplID != i.ReplID:
		return Promoted
	case ok && c.Lineage.Incarnation != i.Incarnation:
		return DataLost // its incarnation was deleted and made again
	case i.RecordFree():
		return NotCertified
	}
	return DataLost
}

// Verdict is whether a master counts by itself at a given moment and, if
// not, why.
type Verdict struct {
	Kind  Kind
	Since time.Time // when this client first saw it so (zero: unknown)
	Until time.Time // when its time quarantine ends; zero when not by time
	Cause error     // for Unreachable: the probe's error
	Now   time.Time // when the verdict was taken (for the countdown)
	// Detail says more: what it waits for (a scratch certification, the
	// masters a counter sync needs), or which master it duplicates.
	Detail string
}

// Votes reports whether the verdict lets the master count by itself.
func (v Verdict) Votes() bool { return v.Kind == Votes }

// TimeQuarantine reports whether the master waits for the clock.
func (v Verdict) TimeQuarantine() bool { return !v.Until.IsZero() && v.Now.Before(v.Until) }

// String explains the verdict for people, counting down from v.Now.
func (v Verdict) String() string {
	s := v.what()
	if v.TimeQuarantine() {
		s += fmt.Sprintf("; counts from %s (in %s), after its counters are raised",
			v.Until.Format("15:04:05"), v.Until.Sub(v.Now).Round(100*time.Millisecond))
	}
	if v.Detail != "" {
		s += "; " + v.Detail
	}
	return s
}

func (v Verdict) what() string {
	switch v.Kind {
	case Votes:
		return "counts"
	case Unreachable:
		return fmt.Sprintf("unreachable (%s): %v", Cause(v.Cause), v.Cause)
	case NotProbed:
		if v.Cause != nil {
			return fmt.Sprintf("answers, but refused its probe: %v", v.Cause)
		}
		return "not probed yet"
	case Replica:
		return "answers as a replica (role:slave), not as a master"
	case Duplicate:
		return "the same server as another master (same run_id): it is not counted twice"
	case NotCertified:
		return "not certified yet: it has no quorumlock records (a fresh master, or one that lost everything)"
	case DataLost:
		return "lost its data: it has no certificate (a FLUSHALL or an empty restart, or a certification that did not finish)"
	case Restarted:
		return "restarted: its certificate names another process (a restart, or another server in its place)"
	case Promoted:
		return "its replication id changed since it was certified (a promotion, failback or full resync)"
	case RaisingCounters:
		return "raising its fencing counters from the other masters"
	}
	return fmt.Sprintf("unknown state %d", v.Kind)
}
