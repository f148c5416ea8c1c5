package cluster

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestDialRejectsBadInput(t *testing.T) {
	ctx := context.Background()
	for name, urls := range map[string][]string{
		"empty":     nil,
		"bad url":   {"http://example:6379"},
		"duplicate": {"redis://127.0.0.1:1", "redis://127.0.0.1:1/0"},
	} {
		if _, err := Dial(ctx, urls); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: Dial(%v) = %v, want ErrInvalidArgument", name, urls, err)
		}
	}
	if _, err := Dial(ctx, []string{"redis://127.0.0.1:1"}, WithTimeouts(0, time.Second)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero dial timeout: %v", err)
	}
	if _, err := Dial(ctx, []string{"redis://127.0.0.1:1"}, WithPoolSize(0)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("zero pool size: %v", err)
	}
	c, err := Dial(ctx, []string{"redis://:secret@127.0.0.1:1/2"}, WithPoolSize(3))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if got := c.URLs(); len(got) != 1 || got[0] != "redis://:xxxxx@127.0.0.1:1/2" {
		t.Errorf("URLs = %v; want the password redacted", got)
	}
	if ps := c.clients[0].Options().PoolSize; ps != 3 {
		t.Errorf("pool size %d, want 3", ps)
	}
}

func TestFromEnv(t *testing.T) {
	ctx := context.Background()
	t.Setenv(EnvMasters, "")
	if _, err := FromEnv(ctx); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), EnvMasters) {
		t.Fatalf("unset %s: %v", EnvMasters, err)
	}
	rc := clustertest.Start(t, 3)
	t.Setenv(EnvMasters, strings.Join(rc.URLs(), " , "))
	c, err := FromEnv(ctx, WithPing())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if len(c.Clients()) != 3 {
		t.Fatalf("%d clients, want 3", len(c.Clients()))
	}
}

func TestDialWithPingReportsDeadMaster(t *testing.T) {
	rc := clustertest.Start(t, 2)
	urls := rc.URLs()
	if err := rc.Servers[1].Kill(); err != nil {
		t.Fatal(err)
	}
	_, err := Dial(context.Background(), urls, WithPing())
	if err == nil || !strings.Contains(err.Error(), "master 1") {
		t.Fatalf("Dial with a dead master: %v; want an error naming master 1", err)
	}
}

func TestCheckDescribesMasters(t *testing.T) {
	ctx := context.Background()
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	durable := clustertest.StartServer(t, clustertest.AOFAlways)
	dead := clustertest.StartServer(t, clustertest.NoPersistence)
	c, err := Dial(ctx, []string{plain.URL(), durable.URL(), dead.URL()}, WithLongestTTL(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	if err := dead.Kill(); err != nil {
		t.Fatal(err)
	}
	st := c.Check(ctx)
	if len(st) != 3 {
		t.Fatalf("%d statuses", len(st))
	}
	p, d, x := st[0], st[1], st[2]
	if !p.Reachable || p.RunID == "" || p.Version == "" || p.Latency <= 0 {
		t.Fatalf("plain master: %+v", p)
	}
	if p.ClockOffset > time.Second || p.ClockOffset < -time.Second {
		t.Fatalf("clock offset %v against a local redis-server", p.ClockOffset)
	}
	if p.AOF || p.Durable() || !p.Quarantined || !errors.Is(p.QuarantineErr, redlock.ErrNotCertified) ||
		!strings.Contains(p.QuarantineReason, "certified once 3 of the 3 masters answer with no quorumlock record; 2 do now") {
		t.Fatalf("plain master without records beside an unreachable one: %+v; want not certified, waiting for the third master", p)
	}
	if p.DELEX {
		t.Fatalf("Debian's redis-server 7 reported DELEX")
	}
	if !d.Reachable || !d.AOF || d.AppendFsync != "always" || !d.Durable() {
		t.Fatalf("durable master: %+v", d)
	}
	if !d.Quarantined || d.Fresh || !errors.Is(d.QuarantineErr, redlock.ErrNotCertified) || d.QuarantineLeft != 0 {
		t.Fatalf("durable master without records beside an unreachable one: %+v; want not certified (the cluster is not known to be fresh: the dead master might carry a certificate)", d)
	}
	if x.Reachable || !errors.Is(x.Err, redlock.ErrUnreachable) || !strings.Contains(x.Err.Error(), "connection refused") {
		t.Fatalf("dead master: %+v; want unreachable, connection refused", x)
	}

	// Once a client has certified it, the master counts.
	lc, err := redlock.New(c.Clients()[1:2], redlock.WithQuarantine(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	lease, err := lc.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("lock on a single durable master: %v", err)
	}
	_ = lease.Release(ctx)
	if d := c.Check(ctx)[1]; d.Quarantined || !d.Certified {
		t.Fatalf("durable master after first use: %+v", d)
	}
}

func TestCheckFreshAndMarkerlessMasters(t *testing.T) {
	ctx := context.Background()
	rc := clustertest.Start(t, 3, clustertest.AOFAlways)
	c, err := Dial(ctx, rc.URLs())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for _, st := range c.Check(ctx) {
		if !st.Fresh || st.Quarantined {
			t.Fatalf("master of a never-used durable cluster: %+v; want fresh, not quarantined", st)
		}
	}
	lc, err := redlock.New(c.Clients())
	if err != nil {
		t.Fatal(err)
	}
	defer lc.Close()
	lease, err := lc.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("first lock on a fresh durable cluster: %v", err)
	}
	_ = lease.Release(ctx)
	// Master 2 loses its data (FLUSHALL): it must be reported as waiting for
	// its counters, while the cluster is no longer fresh.
	if err := c.Clients()[2].FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	st := c.Check(ctx)
	if st[0].Fresh || st[0].Quarantined || !st[0].Certified {
		t.Fatalf("marked master: %+v", st[0])
	}
	if !st[2].Quarantined || !errors.Is(st[2].QuarantineErr, redlock.ErrDataLost) || !strings.Contains(st[2].QuarantineReason, "lost its data") {
		t.Fatalf("flushed master: %+v; want quarantined: it lost its data", st[2])
	}
}

func TestRedactHidesPasswords(t *testing.T) {
	for in, want := range map[string]string{
		"redis://:secret@h:6379/0": "redis://:xxxxx@h:6379/0",
		"rediss://user:pw@h:6380":  "rediss://user:xxxxx@h:6380",
		"redis://h:6379":           "redis://h:6379",
		"redis://user@h:6379":      "redis://user@h:6379",
		"redis://u:pa/ss@h:6379":   "redis://u:xxxxx@h:6379",
		"redis://u/pa@ss@h:6379":   "redis://:xxxxx@h:6379",
		"redis://u:p@ss@h":         "redis://u:xxxxx@h",
	} {
		if got := hideUserinfo(in); got != want {
			t.Errorf("hideUserinfo(%q) = %q, want %q", in, got, want)
		}
	}
}
