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
)

// Info is what one probe learned about a master.
type Info struct {
	Version     string
	RunID       string
	Uptime      time.Duration
	AOF         bool   // appendonly yes
	AppendFsync string // "always", "everysec", "no", or "" when CONFIG GET is refused
	RDBSaves    string // the save setting, "" when none or unknown
	DELEX       bool   // the server has DELEX (Redis ≥ 8.4)
	Epoch       string // the quorumlock epoch marker, "" when absent
	Synced      string // the run_id whose counters were last known complete, "" when absent
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
}

// Durable reports whether the master loses nothing acknowledged when its
// process is killed: appendonly yes with appendfsync always.
func (i Info) Durable() bool { return i.AOF && i.AppendFsync == "always" }

// Keys names the two quorumlock keys a probe reads.
type Keys struct {
	Epoch  string // the epoch marker: present while the master kept its data
	Synced string // the run_id of the process whose counters were last completed
}

// Master probes rdb. CONFIG GET may be refused (managed Redis renames it):
// AppendFsync and RDBSaves are then "" and the master counts as not durable.
func Master(ctx context.Context, rdb redis.UniversalClient, keys Keys) (Info, error) {
	var info Info
	start := time.Now()
	pipe := rdb.Pipeline()
	infoCmd := pipe.Info(ctx, "server", "persistence", "replication")
	fsyncCmd := pipe.ConfigGet(ctx, "appendfsync")
	saveCmd := pipe.ConfigGet(ctx, "save")
	delexCmd := pipe.Do(ctx, "COMMAND", "INFO", "DELEX")
	epochCmd := pipe.Get(ctx, keys.Epoch)
	syncedCmd := pipe.Get(ctx, keys.Synced)
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
	info.Version, info.RunID = fields["redis_version"], fields["run_id"]
	if info.RunID == "" {
		return info, errors.New("INFO server has no run_id")
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
	switch v, err := epochCmd.Result(); {
	case err == nil:
		info.Epoch = v
	case !errors.Is(err, redis.Nil):
		return info, fmt.Errorf("GET epoch: %w", err)
	}
	switch v, err := syncedCmd.Result(); {
	case err == nil:
		info.Synced = v
	case !errors.Is(err, redis.Nil):
		return info, fmt.Errorf("GET synced: %w", err)
	}
	if t, err := timeCmd.Result(); err == nil {
		info.ServerTime = t
		info.ClockOffset = t.Sub(start.Add(info.Latency / 2))
	}
	return info, nil
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
