package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestStateRule(t *testing.T) {
	const ttl = 30 * time.Second
	now := time.Unix(1_700_000_000, 0)
	complete := func(i Info) Info { i.Synced = i.RunID; return i }
	young := complete(Info{RunID: "b", Uptime: 5 * time.Second, Epoch: "e", Role: "master"})
	old := complete(Info{RunID: "b", Uptime: time.Hour, Epoch: "e", Role: "master"})
	durable := func(i Info) Info { i.AOF, i.AppendFsync = true, "always"; return i }
	restarted := func(i Info) Info { i.Synced = "a"; return i } // counters completed under run_id a
	knew := State{Probed: true, RunID: "a", Epoch: "e", Role: "master"}
	cases := []struct {
		name  string
		prev  State
		info  Info
		want  Kind
		until time.Duration // from now; 0: not by time
	}{
		{"young, first contact", State{}, young, Young, 25 * time.Second},
		{"old, first contact", State{}, old, Votes, 0},
		{"durable young, first contact", State{}, durable(young), Votes, 0},
		{"no marker, first contact, old and durable", State{}, durable(Info{RunID: "b", Uptime: time.Hour}), DataLost, ttl},
		{"no marker, known before", knew, durable(Info{RunID: "a", Uptime: time.Hour}), DataLost, ttl},
		{"new marker", knew, complete(Info{RunID: "a", Uptime: time.Hour, Epoch: "f"}), DataLost, ttl},
		{"non-durable restart, young", knew, restarted(young), Restarted, 25 * time.Second},
		{"non-durable restart, old: counters first", knew, restarted(old), RaisingCounters, 0},
		{"durable restart votes at once", knew, durable(restarted(young)), Votes, 0},
		{"promoted replica, old and durable", State{}, durable(restarted(Info{RunID: "b", Uptime: time.Hour, Epoch: "e", Promoted: true})), Promoted, ttl},
		{"promoted replica already synced", State{}, durable(complete(Info{RunID: "b", Uptime: time.Hour, Epoch: "e", Promoted: true})), Votes, 0},
		{"replica", State{}, complete(Info{RunID: "b", Uptime: time.Hour, Epoch: "e", Role: "slave"}), Replica, 0},
	}
	for _, tc := range cases {
		v := tc.prev.Observe(tc.info, now).Verdict(now, ttl)
		if v.Kind != tc.want {
			t.Errorf("%s: verdict %v (%s), want kind %v", tc.name, v.Kind, v, tc.want)
			continue
		}
		if got := v.Until.Sub(now); tc.until != 0 && got != tc.until || tc.until == 0 && !v.Until.IsZero() {
			t.Errorf("%s: until now+%v, want now+%v", tc.name, got, tc.until)
		}
		if (v.Err() == nil) != (tc.want == Votes) {
			t.Errorf("%s: Err() = %v", tc.name, v.Err())
		}
	}
}

// A loss is dated from when it is first seen: later probes that still see
// it do not push the end of the quarantine further out, and the quarantine
// ends by time, then by a counter sync.
func TestLossIsDatedFromFirstSight(t *testing.T) {
	const ttl = 10 * time.Second
	t0 := time.Unix(1_700_000_000, 0)
	lost := Info{RunID: "b", Uptime: time.Hour, AOF: true, AppendFsync: "always"}
	s := State{}.Observe(lost, t0)
	s = s.Observe(lost, t0.Add(5*time.Second))
	if v := s.Verdict(t0.Add(5*time.Second), ttl); v.Kind != DataLost || !v.Until.Equal(t0.Add(ttl)) {
		t.Fatalf("second sight: %v until %v; want lost its data until t0+%v", v.Kind, v.Until, ttl)
	}
	if v := s.Verdict(t0.Add(ttl), ttl); v.Kind != RaisingCounters {
		t.Fatalf("after the quarantine: %v; want raising counters", v.Kind)
	}
	if v := s.Synced("m").Verdict(t0.Add(ttl), ttl); !v.Votes() {
		t.Fatalf("after the sync: %v", v)
	}
	// A fresh cluster's markers are no loss: only the young rule is left.
	if v := (State{}).Observe(Info{RunID: "b", Uptime: time.Hour}, t0).Bootstrapped("m").Verdict(t0, ttl); !v.Votes() {
		t.Fatalf("bootstrapped old master: %v", v)
	}
	if !errors.Is(s.Verdict(t0, ttl).Err(), ErrDataLost) || !errors.Is(s.Verdict(t0, ttl).Err(), ErrQuarantined) {
		t.Fatal("a lost master's error matches neither ErrDataLost nor ErrQuarantined")
	}
	if v := s.Failed(errors.New("dial tcp: connection refused")).Verdict(t0, ttl); v.Kind != Unreachable || !errors.Is(v.Err(), ErrUnreachable) {
		t.Fatalf("failed probe: %v", v)
	}
}

func TestMasterAgainstRealServers(t *testing.T) {
	ctx := context.Background()
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	durable := clustertest.StartServer(t, clustertest.AOFAlways)
	p, err := Master(ctx, plain.Client(t), Keys{Epoch: "epoch", Synced: "synced"})
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
	d, err := Master(ctx, c, Keys{Epoch: "epoch", Synced: "synced"})
	if err != nil {
		t.Fatal(err)
	}
	if !d.AOF || d.AppendFsync != "always" || !d.Durable() || d.Epoch != "e1" || d.Role != "master" || d.Promoted {
		t.Fatalf("durable server: %+v", d)
	}
	if err := durable.Kill(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := Master(short, c, Keys{Epoch: "epoch", Synced: "synced"}); err == nil {
		t.Fatal("probe of a dead server succeeded")
	}
}

func TestParseInfo(t *testing.T) {
	got := parseInfo("# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Persistence\r\naof_enabled:1\r\n")
	if got["redis_version"] != "7.0.15" || got["run_id"] != "abc" || got["aof_enabled"] != "1" {
		t.Fatalf("parseInfo = %v", got)
	}
}
