package probe

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestQuarantineRule(t *testing.T) {
	const ttl = 30 * time.Second
	young := Info{RunID: "b", Uptime: 5 * time.Second, Epoch: "e"}
	durable := Info{RunID: "b", Uptime: 5 * time.Second, AOF: true, AppendFsync: "always", Epoch: "e"}
	everysec := Info{RunID: "b", Uptime: 5 * time.Second, AOF: true, AppendFsync: "everysec", Epoch: "e"}
	old := Info{RunID: "b", Uptime: time.Hour, Epoch: "e"}
	cases := []struct {
		name       string
		info       Info
		prevRun    string
		prevEpoch  string
		wantWait   time.Duration
		wantReason string
	}{
		{"young, first contact", young, "", "", 25 * time.Second, "up 5s"},
		{"young, restarted", young, "a", "e", 25 * time.Second, "restarted (run_id changed)"},
		{"durable restart votes at once", durable, "a", "e", 0, ""},
		{"everysec restart waits", everysec, "a", "e", 25 * time.Second, "without appendfsync always"},
		{"old enough", old, "a", "e", 0, ""},
		{"lost data, even durable", durable, "b", "other", ttl, "lost its data"},
		{"lost data, old", old, "b", "other", ttl, "lost its data"},
	}
	for _, tc := range cases {
		wait, reason := Quarantine(tc.info, tc.prevRun, tc.prevEpoch, ttl)
		if wait != tc.wantWait || !strings.Contains(reason, tc.wantReason) {
			t.Errorf("%s: Quarantine = %v, %q; want %v, containing %q", tc.name, wait, reason, tc.wantWait, tc.wantReason)
		}
	}
}

func TestMasterAgainstRealServers(t *testing.T) {
	ctx := context.Background()
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	durable := clustertest.StartServer(t, clustertest.AOFAlways)
	p, err := Master(ctx, plain.Client(t), "epoch")
	if err != nil {
		t.Fatal(err)
	}
	if p.RunID == "" || !strings.HasPrefix(p.Version, "7.") || p.AOF || p.Durable() || p.DELEX || p.Epoch != "" {
		t.Fatalf("plain server: %+v", p)
	}
	if p.Latency <= 0 || p.ServerTime.IsZero() || p.ClockOffset > time.Second || p.ClockOffset < -time.Second {
		t.Fatalf("plain server timing: latency %v, time %v, offset %v", p.Latency, p.ServerTime, p.ClockOffset)
	}
	c := durable.Client(t)
	if err := c.Set(ctx, "epoch", "e1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	d, err := Master(ctx, c, "epoch")
	if err != nil {
		t.Fatal(err)
	}
	if !d.AOF || d.AppendFsync != "always" || !d.Durable() || d.Epoch != "e1" {
		t.Fatalf("durable server: %+v", d)
	}
	if err := durable.Kill(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := Master(short, c, "epoch"); err == nil {
		t.Fatal("probe of a dead server succeeded")
	}
}

func TestParseInfo(t *testing.T) {
	got := parseInfo("# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Persistence\r\naof_enabled:1\r\n")
	if got["redis_version"] != "7.0.15" || got["run_id"] != "abc" || got["aof_enabled"] != "1" {
		t.Fatalf("parseInfo = %v", got)
	}
}
