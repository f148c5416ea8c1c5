package probe

import (
	"bufio"
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// Info is what one probe learned about a master.
type Info struct {
	Version     string
	RunID       string
	ReplID      string // master_replid: with RunID, the master's lineage
	Uptime      time.Duration
	AOF         bool   // appendonly yes
	AppendFsync string // "always", "everysec", "no", or "" when CONFIG GET is refused
	RDBSaves    string // the save setting, "" when none or unknown
	DELEX       bool   // the server has DELEX (Redis ≥ 8.4)
	// Replication, from INFO replication: Role is "master" or "slave";
	// Promoted says the master was a replica and was promoted (it keeps the
	// old replication id as master_replid2, second_repl_offset >= 0);
	// Replicas is connected_slaves.
	Role       string
	Promoted   bool
	Replicas   int
	ServerTime time.Time
	// Latency is the round trip of the probe; ClockOffset is the master's TIME
	// minus the local clock at the midpoint of that round trip.
	Latency     time.Duration
	ClockOffset time.Duration

	// quorumlock's records on the master (internal/keys), "" when absent:
	// its certificate, its scratch guard, and the markers of earlier
	// versions.
	Cert, Scratch, OldEpoch, OldSynced string
	// Floor is the token floor ("" when none); FenceBuckets the B the
	// masters' clients use ("" until one locked with fencing); Incarnation
	// the dataset's random name ("" until a certification made one).
	Floor, FenceBuckets, Incarnation string
	// Lambda is the longest TTL of a lease that may still be live, as the
	// master's lambda set says (0 when none).
	Lambda time.Duration
}

// Lineage is the master's lineage as probed.
func (i Info) Lineage() Lineage {
	return Lineage{RunID: i.RunID, ReplID: i.ReplID, Incarnation: i.Incarnation}
}

// Certified reports rule V for this probe: its role is master and its
// certificate names its lineage.
func (i Info) Certified() bool { return Counts(i.Cert, i.Lineage(), i.Role) }

// RecordFree reports that the master carries no quorumlock record at all:
// no certificate, no scratch guard, no marker of an earlier version. Rule S
// (docs/safety.md) counts such masters.
func (i Info) RecordFree() bool {
	return i.Cert == "" && i.Scratch == "" && i.OldEpoch == "" && i.OldSynced == ""
}

// Durable reports whether the master's current configuration loses nothing
// acknowledged when its process is killed: appendonly yes with appendfsync
// always. It is reported to operators, never used to judge a restart: how
// the previous process persisted is not in the current one's config.
func (i Info) Durable() bool { return i.AOF && i.AppendFsync == "always" }

// Master probes rdb in one pipelined round trip. CONFIG GET may be refused
// (managed Redis renames it): AppendFsync and RDBSaves are then "".
func Master(ctx context.Context, rdb redis.UniversalClient) (Info, error) {
	var info Info
	start := time.Now()
	pipe := rdb.Pipeline()
	infoCmd := pipe.Info(ctx, "server", "persistence", "replication")
	fsyncCmd := pipe.ConfigGet(ctx, "appendfsync")
	saveCmd := pipe.ConfigGet(ctx, "save")
	delexCmd := pipe.Do(ctx, "COMMAND", "INFO", "DELEX")
	recordsCmd := pipe.MGet(ctx, keys.Cert, keys.Scratch, keys.OldEpoch, keys.OldSynced, keys.Floor, keys.FenceBuckets, keys.Incarnation)
	lambdaCmd := pipe.ZRangeWithScores(ctx, keys.Lambda, 0, -1)
	timeCmd := pipe.Time(ctx)
	_, execErr := pipe.Exec(ctx)
	end := time.Now()
	info.Latency = end.Sub(start)

	if err := infoCmd.Err(); err != nil {
		return info, fmt.Errorf("INFO: %w", err)
	}
	if execErr != nil && infoCmd.Val() == "" {
		// The connection failed before any command ran (WRONGPASS,
		// NOAUTH at login): go-redis returns that error reply from Exec
		// without stamping it on the commands.
		return info, execErr
	}
	fields := parseInfo(infoCmd.Val())
	info.Version, info.RunID, info.ReplID = fields["redis_version"], fields["run_id"], fields["master_replid"]
	if info.RunID == "" || info.ReplID == "" {
		return info, errors.New("INFO has no run_id or master_replid")
	}
	up, err := strconv.ParseInt(fields["uptime_in_seconds"], 10, 64)
	if err != nil {
		return info, fmt.Errorf("INFO server uptime_in_seconds %q: %w", fields["uptime_in_seconds"], err)
	}
	info.Uptime = time.Duration(up) * time.Second
	info.AOF = fields["aof_enabled"] == "1"
	info.Role = fields["role"]
	if off, err := strconv.ParseInt(fields["second_repl_offset"], 10, 64); err == nil && off >= 0 {
		info.Promoted = true
	}
	info.Replicas, _ = strconv.Atoi(fields["connected_slaves"])
	if v, err := fsyncCmd.Result(); err == nil {
		info.AppendFsync = v["appendfsync"]
	}
	if v, err := saveCmd.Result(); err == nil {
		info.RDBSaves = v["save"]
	}
	if v, err := delexCmd.Slice(); err == nil && len(v) == 1 {
		info.DELEX = v[0] != nil // COMMAND INFO answers nil for an unknown command
	}
	vals, err := recordsCmd.Result()
	if err != nil {
		return info, fmt.Errorf("MGET of quorumlock's records: %w", err)
	}
	rec := make([]string, len(vals))
	for n, v := range vals {
		rec[n], _ = v.(string)
	}
	info.Cert, info.Scratch, info.OldEpoch, info.OldSynced, info.Floor, info.FenceBuckets, info.Incarnation = rec[0], rec[1], rec[2], rec[3], rec[4], rec[5], rec[6]
	t, err := timeCmd.Result()
	if err != nil {
		return info, fmt.Errorf("TIME: %w", err)
	}
	info.ServerTime = t
	info.ClockOffset = t.Sub(start.Add(info.Latency / 2))
	entries, err := lambdaCmd.Result()
	if err != nil {
		return info, fmt.Errorf("ZRANGE %s: %w", keys.Lambda, err)
	}
	info.Lambda = LiveLambda(entries, t)
	return info, nil
}

// LiveLambda is the longest TTL among a lambda set's entries (member: a TTL
// in ms, score: when the last lease that used it ends, in server ms) that
// have not ended at now.
func LiveLambda(entries []redis.Z, now time.Time) time.Duration {
	var longest time.Duration
	for _, z := range entries {
		ms, err := strconv.ParseInt(fmt.Sprint(z.Member), 10, 64)
		if err != nil || int64(z.Score) <= now.UnixMilli() {
			continue
		}
		longest = max(longest, time.Duration(ms)*time.Millisecond)
	}
	return longest
}

// parseInfo reads INFO's "field:value" lines.
func parseInfo(s string) map[string]string {
	out := make(map[string]string)
	sc := bufio.NewScanner(strings.NewReader(s))
	for sc.Scan() {
		line := strings.TrimSpace(sc.Text())
		if line == "" || line[0] == '#' {
			continue
		}
		if k, v, ok := strings.Cut(line, ":"); ok {
			out[k] = v
		}
	}
	return out
}
