package cluster

import (
	"context"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/internal/restart"
	"github.com/quorumlock/quorumlock/internal/sameserver"
	"github.com/quorumlock/quorumlock/redlock"
)

// MasterStatus is what Check learned about one master.
type MasterStatus struct {
	Master    int
	URL       string // password redacted
	Reachable bool
	// Err says why the master is not reachable: it matches
	// redlock.ErrUnreachable and its text names the cause (connection
	// refused, timeout, auth, TLS, DNS).
	Err error

	Latency     time.Duration // round trip of the check
	ClockOffset time.Duration // master's TIME − local clock at the round trip's midpoint
	Version     string
	RunID       string
	Uptime      time.Duration

	AOF         bool   // appendonly yes
	AppendFsync string // "always", "everysec", "no", or "" when CONFIG GET is refused
	RDBSaves    string // the save setting ("" for none or unknown)
	DELEX       bool   // has DELEX (Redis ≥ 8.4)
	// Certified says the master's certificate names its lineage (run_id and
	// master_replid): its yes counts by itself (rule V, docs/safety.md).
	Certified bool
	// RecordFree says it carries no quorumlock record at all (a fresh
	// master, or one that lost everything).
	RecordFree bool

	// Replication: Role is "master" or "slave"; Promoted says it is a
	// promoted replica (a failover happened); Replicas counts its connected
	// replicas. quorumlock wants independent masters: Warnings says what
	// replication means for the lock.
	Role     string
	Promoted bool
	Replicas int
	Warnings []string

	// ReplID is INFO's master_replid. SameAs lists the other masters of the
	// list that are this very server (the same run_id: one process under two
	// addresses or database numbers) or share its replication history (the
	// same master_replid: one replicates the other); Same says which, in
	// words ("masters 0 and 1 are one server (the same run_id)"), and is in
	// Warnings too. A quorum counts each server once: such a list is refused.
	ReplID string
	SameAs []int
	Same   string

	// Quarantined says that a quorumlock client meeting this master now would
	// not count its yes by itself (it still counts in rounds that every
	// master grants); QuarantineReason says why, QuarantineErr matches the
	// reason's redlock sentinel (redlock.ErrNotCertified, ErrDataLost,
	// ErrRestarted, ErrPromoted, ...), and QuarantineLeft is how long such a
	// client waits before raising its counters (0 when it does not wait).
	Quarantined      bool
	QuarantineReason string
	QuarantineErr    error
	QuarantineLeft   time.Duration

	// Fresh says that no master carries a certificate and enough masters
	// carry no record at all (⌈(M+q)/2⌉): the first lock certifies them all
	// at once (rule S).
	Fresh bool
}

// Durable reports appendonly yes with appendfsync always: a kill -9 loses
// nothing acknowledged. quorumlock does not count a restarted master at once
// for it (the previous process's config is not the current one's): it is
// advice for operators (docs/safety.md).
func (s MasterStatus) Durable() bool { return s.AOF && s.AppendFsync == "always" }

// Check probes every master in parallel, each within ctx, and reports one
// MasterStatus per master in URL order, judged as a quorumlock client with
// quarantine meeting the cluster for the first time would judge it, and
// flags masters that are not independent (SameAs: one server listed twice,
// or one replicating another). It never fails as a whole: an unreachable
// master has Reachable false and Err set.
func (c *Cluster) Check(ctx context.Context) []MasterStatus {
	out := make([]MasterStatus, len(c.clients))
	infos := make([]probe.Info, len(c.clients))
	var wg sync.WaitGroup
	for i, rc := range c.clients {
		wg.Go(func() {
			st := MasterStatus{Master: i, URL: c.urls[i]}
			info, err := probe.Master(ctx, rc)
			if err != nil {
				st.Err = fmt.Errorf("%w (%s): %w", redlock.ErrUnreachable, probe.Cause(err), err)
				out[i] = st
				return
			}
			st.Reachable = true
			st.Latency, st.ClockOffset = info.Latency, info.ClockOffset
			st.Version, st.RunID, st.Uptime = info.Version, info.RunID, info.Uptime
			st.AOF, st.AppendFsync, st.RDBSaves = info.AOF, info.AppendFsync, info.RDBSaves
			st.DELEX, st.Certified, st.RecordFree = info.DELEX, info.Certified(), info.RecordFree()
			st.Role, st.Promoted, st.Replicas = info.Role, info.Promoted, info.Replicas
			st.Warnings = replicationWarnings(info)
			st.ReplID = info.ReplID
			infos[i] = info
			out[i] = st
		})
	}
	wg.Wait()
	markSame(out)
	if c.tolerance == 0 { // with a data-loss tolerance nothing is detected: every reachable master counts
		judge(out, infos, c.longestTTL)
	}
	return out
}

// Quorum is how many masters a lock needs: ⌊(M+f)/2⌋ + 1, with f the
// data-loss tolerance (WithDataLossTolerance; 0 by default: a majority).
func (c *Cluster) Quorum() int { return quorum.Size(len(c.clients), c.tolerance) }

// Tolerance is the data-loss tolerance f given to Dial (0 by default).
func (c *Cluster) Tolerance() int { return c.tolerance }

// judge sets the quarantine fields as a client meeting the masters for the
// first time, with longest the longest TTL in use, would find them: certified
// masters count; a fresh cluster is certified at the first lock (rule S);
// any other master waits the longest TTL in use (the largest of longest and
// what the masters' lambda sets say), then has its counters raised.
func judge(out []MasterStatus, infos []probe.Info, longest time.Duration) {
	m := len(out)
	q := quorum.Size(m, 0)
	recordFree, certs := 0, 0
	for i, st := range out {
		if !st.Reachable {
			continue
		}
		longest = max(longest, infos[i].Lambda)
		if st.RecordFree {
			recordFree++
		}
		if infos[i].Cert != "" {
			certs++
		}
	}
	fresh := certs == 0 && recordFree >= restart.ScratchSize(m, q)
	now := time.Now()
	for i := range out {
		st := &out[i]
		if !st.Reachable || st.Certified {
			continue
		}
		v := probe.Verdict{Kind: probe.Uncertified(infos[i]), Now: now}
		if v.Kind == probe.NotCertified && certs > 0 {
			v.Kind = probe.DataLost // it lost everything: its peers are certified
		}
		switch {
		case fresh && st.RecordFree:
			st.Fresh = true // the first lock certifies it at once: it counts
			continue
		case v.Kind == probe.NotCertified && certs == 0:
			v.Detail = fmt.Sprintf("a fresh cluster is certified once %d of the %d masters answer with no quorumlock record; %d do now",
				restart.ScratchSize(m, q), m, recordFree)
		case v.Kind != probe.Replica:
			v.Until = now.Add(longest)
			st.QuarantineLeft = longest
		}
		st.Quarantined, st.QuarantineReason, st.QuarantineErr = true, v.String(), v.Err()
	}
}

// replicationWarnings says what a master's replication means for the lock.
func replicationWarnings(info probe.Info) []string {
	var w []string
	if info.Role == "slave" {
		w = append(w, "answers as a replica (role:slave): it cannot take locks")
	}
	if info.Replicas > 0 {
		w = append(w, fmt.Sprintf("has %d connected replica(s): a failover to a lagging one loses the last keys; quorumlock quarantines a promoted replica for the longest TTL, but masters that replicate among each other are not independent", info.Replicas))
	}
	if info.Promoted {
		w = append(w, "is a promoted replica (a failover happened): it may lack the old master's last writes")
	}
	return w
}

// markSame fills SameAs and Same of the masters that are one server or one
// replication history.
func markSame(out []MasterStatus) {
	ids := make([]sameserver.ID, len(out))
	for i, st := range out {
		ids[i] = sameserver.ID{RunID: st.RunID, ReplID: st.ReplID}
	}
	for _, g := range sameserver.Groups(ids) {
		for _, m := range g.Masters {
			st := &out[m]
			for _, o := range g.Masters {
				if o != m {
					st.SameAs = append(st.SameAs, o)
				}
			}
			st.Same = g.String()
			st.Warnings = append(st.Warnings, st.Same)
		}
	}
}
