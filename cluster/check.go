package cluster

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/probe"
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
	Epoch       bool   // carries a quorumlock epoch marker

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
	// not count its vote by itself yet (it still counts in rounds that every
	// master grants); QuarantineReason says why, QuarantineErr matches the
	// reason's redlock sentinel (redlock.ErrYoung, ErrDataLost, ErrPromoted,
	// ...), and QuarantineLeft is how much longer a time quarantine lasts (0
	// when the wait is for a counter sync).
	Quarantined      bool
	QuarantineReason string
	QuarantineErr    error
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
// MasterStatus per master in URL order, judged as a quorumlock client with
// quarantine meeting the cluster for the first time would judge it, and
// flags masters that are not independent (SameAs: one server listed twice,
// or one replicating another). It never fails as a whole: an unreachable
// master has Reachable false and Err set.
func (c *Cluster) Check(ctx context.Context) []MasterStatus {
	out := make([]MasterStatus, len(c.clients))
	states := make([]probe.State, len(c.clients))
	var wg sync.WaitGroup
	for i, rc := range c.clients {
		wg.Go(func() {
			st := MasterStatus{Master: i, URL: c.urls[i]}
			info, err := probe.Master(ctx, rc, probe.Keys{Epoch: redlock.EpochKey, Synced: redlock.SyncedKey})
			if err != nil {
				st.Err = fmt.Errorf("%w (%s): %w", redlock.ErrUnreachable, probe.Cause(err), err)
				out[i] = st
				return
			}
			st.Reachable = true
			st.Latency, st.ClockOffset = info.Latency, info.ClockOffset
			st.Version, st.RunID, st.Uptime = info.Version, info.RunID, info.Uptime
			st.AOF, st.AppendFsync, st.RDBSaves = info.AOF, info.AppendFsync, info.RDBSaves
			st.DELEX, st.Epoch = info.DELEX, info.Epoch != ""
			st.Role, st.Promoted, st.Replicas = info.Role, info.Promoted, info.Replicas
			st.Warnings = replicationWarnings(info)
			st.ReplID = replID(ctx, rc)
			states[i] = probe.State{}.Observe(info, time.Now())
			out[i] = st
		})
	}
	wg.Wait()
	markSame(out)
	fresh := true
	for _, st := range out {
		fresh = fresh && st.Reachable && !st.Epoch
	}
	now := time.Now()
	for i := range out {
		st := &out[i]
		if !st.Reachable {
			continue
		}
		state := states[i]
		if fresh {
			st.Fresh = true
			state = state.Bootstrapped("fresh")
		}
		v := state.Verdict(now, c.longestTTL)
		if v.Votes() {
			continue
		}
		st.Quarantined, st.QuarantineReason, st.QuarantineErr = true, v.String(), v.Err()
		if v.TimeQuarantine() {
			st.QuarantineLeft = v.Until.Sub(now)
		}
	}
	return out
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

// replID reads master_replid from INFO replication ("" when it cannot).
func replID(ctx context.Context, rc redis.UniversalClient) string {
	info, err := rc.Info(ctx, "replication").Result()
	if err != nil {
		return ""
	}
	for line := range strings.Lines(info) {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), "master_replid:"); ok {
			return v
		}
	}
	return ""
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
