package cluster

import (
	"context"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/redlock"
)

// MasterStatus is what Check learned about one master.
type MasterStatus struct {
	Master    int
	URL       string // password redacted
	Reachable bool
	Err       error // why it is not reachable, or what could not be read

	Latency     time.Duration // round trip of the check
	ClockOffset time.Duration // master's TIME − local clock at the round trip's midpoint
	Version     string
	RunID       string
	Uptime      time.Duration

	AOF         bool   // appendonly yes
	AppendFsync string // "always", "everysec", "no", or "" when CONFIG GET is refused
	RDBSaves    string // the save setting ("" for none or unknown)
	DELEX       bool   // has DELEX (Redis ≥ 8.4)
	Epoch       bool   // carries a quorumlock epoch marker

	// Quarantined says that a quorumlock client meeting this master now would
	// not count its vote yet; QuarantineReason says why and QuarantineLeft for
	// how much longer (by uptime; a master without an epoch marker also has its
	// fencing counters raised from the others before it votes).
	Quarantined      bool
	QuarantineReason string
	QuarantineLeft   time.Duration

	// Fresh says that no master of the cluster carries an epoch marker and
	// every master answered: nobody has locked with quarantine yet, and the
	// first lock marks them all at once.
	Fresh bool
}

// Durable reports appendonly yes with appendfsync always: a restart loses
// nothing acknowledged, so the master may vote at once.
func (s MasterStatus) Durable() bool { return s.AOF && s.AppendFsync == "always" }

// Check probes every master in parallel, each within ctx, and reports one
// MasterStatus per master in URL order. It never fails as a whole: an
// unreachable master has Reachable false and Err set.
func (c *Cluster) Check(ctx context.Context) []MasterStatus {
	out := make([]MasterStatus, len(c.clients))
	var wg sync.WaitGroup
	for i, rc := range c.clients {
		wg.Go(func() {
			st := MasterStatus{Master: i, URL: c.urls[i]}
			info, err := probe.Master(ctx, rc, redlock.EpochKey)
			if err != nil {
				st.Err = err
				out[i] = st
				return
			}
			st.Reachable = true
			st.Latency, st.ClockOffset = info.Latency, info.ClockOffset
			st.Version, st.RunID, st.Uptime = info.Version, info.RunID, info.Uptime
			st.AOF, st.AppendFsync, st.RDBSaves = info.AOF, info.AppendFsync, info.RDBSaves
			st.DELEX, st.Epoch = info.DELEX, info.Epoch != ""
			if wait, reason := probe.Quarantine(info, "", "", c.longestTTL); wait > 0 {
				st.Quarantined, st.QuarantineReason, st.QuarantineLeft = true, reason, wait
			}
			out[i] = st
		})
	}
	wg.Wait()
	fresh := true
	for _, st := range out {
		fresh = fresh && st.Reachable && !st.Epoch
	}
	for i := range out {
		st := &out[i]
		switch {
		case fresh:
			st.Fresh = true
		case st.Reachable && !st.Epoch && !st.Quarantined:
			st.Quarantined = true
			st.QuarantineReason = "no epoch marker (lost its data, or never used by quorumlock): its counters are raised from the others before it votes"
		}
	}
	return out
}
