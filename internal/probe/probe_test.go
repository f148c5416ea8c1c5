package probe

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Rule V: only a certificate naming the master's current lineage, on a
// master, counts.
func TestCountsIsRuleV(t *testing.T) {
	l := Lineage{RunID: "r1", ReplID: "p1", Incarnation: "i1"}
	cert := Cert{Lineage: l, Origin: "sync n"}.String()
	cases := []struct {
		name string
		cert string
		l    Lineage
		role string
		want bool
	}{
		{"its own lineage", cert, l, "master", true},
		{"another process (a restart: a new run_id and replication id)", cert, Lineage{RunID: "r2", ReplID: "p2", Incarnation: "i1"}, "master", false},
		{"a restart seen by a grant (no run_id)", cert, Lineage{ReplID: "p2", Incarnation: "i1"}, "master", false},
		{"its own history seen by a grant (no run_id)", cert, Lineage{ReplID: "p1", Incarnation: "i1"}, "master", true},
		// A master's replication id is drawn at its start and at every
		// promotion (TestReplicationIDIsNewForEveryMastership): the run_id
		// adds nothing, and rule V does not compare it.
		{"the same replication id under another run_id", cert, Lineage{RunID: "r2", ReplID: "p1", Incarnation: "i1"}, "master", true},
		{"another replication id (a failback or promotion)", cert, Lineage{RunID: "r1", ReplID: "p2", Incarnation: "i1"}, "master", false},
		{"another incarnation (a flush)", cert, Lineage{RunID: "r1", ReplID: "p1", Incarnation: "i2"}, "master", false},
		{"no certificate", "", l, "master", false},
		{"a replica", cert, l, "slave", false},
		{"a malformed certificate", "r1 p1 i1", l, "master", false},
		{"an unknown lineage", cert, Lineage{}, "master", false},
	}
	for _, c := range cases {
		if got := Counts(c.cert, c.l, c.role); got != c.want {
			t.Errorf("%s: Counts = %v, want %v", c.name, got, c.want)
		}
	}
}

func TestUncertifiedSaysWhy(t *testing.T) {
	l := Lineage{RunID: "r1", ReplID: "p1", Incarnation: "i1"}
	info := func(cert string) Info {
		return Info{RunID: "r1", ReplID: "p1", Incarnation: "i1", Role: "master", Cert: cert}
	}
	cases := []struct {
		name string
		info Info
		want Kind
	}{
		{"nothing at all", info(""), NotCertified},
		{"a scratch guard only", Info{RunID: "r1", ReplID: "p1", Role: "master", Scratch: "r1 p1 i1 scratch s 0,1"}, DataLost},
		{"an earlier version's marker", Info{RunID: "r1", ReplID: "p1", Role: "master", OldEpoch: "e"}, DataLost},
		{"another process", info(Cert{Lineage: Lineage{RunID: "r0", ReplID: "p1", Incarnation: "i1"}, Origin: "sync n"}.String()), Restarted},
		{"another replication id", info(Cert{Lineage: Lineage{RunID: "r1", ReplID: "p0", Incarnation: "i1"}, Origin: "sync n"}.String()), Promoted},
		{"another replication id, the run_id not read (a grant's INFO)", Info{ReplID: "p1", Incarnation: "i1", Role: "master",
			Cert: Cert{Lineage: Lineage{RunID: "r0", ReplID: "p0", Incarnation: "i1"}, Origin: "sync n"}.String()}, Promoted},
		{"another incarnation", info(Cert{Lineage: Lineage{RunID: "r1", ReplID: "p1", Incarnation: "i0"}, Origin: "sync n"}.String()), DataLost},
		{"a replica", Info{RunID: "r1", ReplID: "p1", Role: "slave"}, Replica},
	}
	for _, c := range cases {
		if got := Uncertified(c.info); got != c.want {
			t.Errorf("%s: %v, want %v", c.name, got, c.want)
		}
	}
	if !info(Cert{Lineage: l, Origin: "x"}.String()).Certified() {
		t.Error("a master with its own certificate is not certified")
	}
	v := Verdict{Kind: DataLost, Now: time.Unix(0, 0), Until: time.Unix(30, 0)}
	if !errors.Is(v.Err(), ErrDataLost) || !errors.Is(v.Err(), ErrQuarantined) || !strings.Contains(v.String(), "in 30s") {
		t.Fatalf("verdict %q: want ErrDataLost, ErrQuarantined and the countdown", v)
	}
}

func TestParseCertAndScratch(t *testing.T) {
	c, ok := ParseCert("r1 p1 i1 scratch abc 0,1,2")
	if !ok || c.Lineage != (Lineage{RunID: "r1", ReplID: "p1", Incarnation: "i1"}) || c.Origin != "scratch abc 0,1,2" {
		t.Fatalf("ParseCert = %+v, %v", c, ok)
	}
	g := Scratch{Lineage: c.Lineage, ID: "abc", Members: "0,1,2"}
	back, ok := ParseScratch(g.String())
	if !ok || back != g || g.Origin() != c.Origin {
		t.Fatalf("ParseScratch(%q) = %+v, %v", g, back, ok)
	}
	for _, bad := range []string{"", "r1", "r1 p1", "r1 p1 i1", "r1 p1 i1 sync n extra words"} {
		if _, ok := ParseScratch(bad); ok {
			t.Errorf("ParseScratch(%q) accepted", bad)
		}
	}
}

// The facts rule V rests on, on a real redis-server 7: a restart gives a new
// run_id and a new replication id; REPLICAOF and REPLICAOF NO ONE give a new
// replication id without a restart; a FLUSHALL keeps both (and deletes the
// certificate with every other key).
func TestLineageChangesWithEveryLossButAFlush(t *testing.T) {
	ctx := context.Background()
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	other := clustertest.StartServer(t, clustertest.NoPersistence)
	c := s.Client(t)
	lineage := func() Lineage {
		t.Helper()
		info, err := Master(ctx, c)
		if err != nil {
			t.Fatal(err)
		}
		return info.Lineage()
	}
	l0 := lineage()
	if err := c.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if l := lineage(); l.RunID != l0.RunID || l.ReplID != l0.ReplID {
		t.Fatalf("FLUSHALL changed the run_id or replication id: %v → %v", l0, l)
	}
	host, port, _ := strings.Cut(other.Addr, ":")
	if err := c.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	l1 := lineage()
	if l1.RunID != l0.RunID || l1.ReplID == l0.ReplID {
		t.Fatalf("a failback: %v → %v; want the same run_id and a new replication id", l0, l1)
	}
	if err := s.Restart(clustertest.AOFAlways); err != nil {
		t.Fatal(err)
	}
	if l2 := lineage(); l2.RunID == l1.RunID || l2.ReplID == l1.ReplID {
		t.Fatalf("a restart: %v → %v; want a new run_id and a new replication id", l1, l2)
	}
}

func TestMasterAgainstRealServers(t *testing.T) {
	ctx := context.Background()
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	durable := clustertest.StartServer(t, clustertest.AOFAlways)
	p, err := Master(ctx, plain.Client(t))
	if err != nil {
		t.Fatal(err)
	}
	if p.RunID == "" || p.ReplID == "" || !strings.HasPrefix(p.Version, "7.") || p.AOF || p.Durable() || p.DELEX || !p.RecordFree() || p.Certified() {
		t.Fatalf("plain server: %+v", p)
	}
	if p.Latency <= 0 || p.ServerTime.IsZero() || p.ClockOffset > time.Second || p.ClockOffset < -time.Second {
		t.Fatalf("plain server timing: latency %v, time %v, offset %v", p.Latency, p.ServerTime, p.ClockOffset)
	}
	c := durable.Client(t)
	d, err := Master(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, keys.Incarnation, "i1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	l := d.Lineage()
	l.Incarnation = "i1"
	cert := Cert{Lineage: l, Origin: "test"}.String()
	expiry := time.Now().Add(time.Minute).UnixMilli()
	if err := c.Set(ctx, keys.Cert, cert, 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Do(ctx, "ZADD", keys.Lambda, expiry, 30000, 1, 99000).Err(); err != nil { // one live entry, one ended
		t.Fatal(err)
	}
	d, err = Master(ctx, c)
	if err != nil {
		t.Fatal(err)
	}
	if !d.AOF || d.AppendFsync != "always" || !d.Durable() || !d.Certified() || d.RecordFree() || d.Role != "master" || d.Promoted || d.Lambda != 30*time.Second {
		t.Fatalf("durable certified server: %+v", d)
	}
	if err := durable.Kill(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, time.Second)
	defer cancel()
	if _, err := Master(short, c); err == nil {
		t.Fatal("probe of a dead server succeeded")
	}
}

func TestParseInfo(t *testing.T) {
	got := parseInfo("# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Persistence\r\naof_enabled:1\r\n")
	if got["redis_version"] != "7.0.15" || got["run_id"] != "abc" || got["aof_enabled"] != "1" {
		t.Fatalf("parseInfo = %v", got)
	}
	l, role, err := ParseLineage("# Server\r\nredis_version:7.0.15\r\nrun_id:abc\r\n\r\n# Replication\r\nrole:master\r\nmaster_replid:def\r\nmaster_replid2:000\r\n")
	if err != nil || l != (Lineage{RunID: "abc", ReplID: "def"}) || role != "master" {
		t.Fatalf("ParseLineage = %v %q %v", l, role, err)
	}
	if _, _, err := ParseLineage("# Server\r\nredis_version:7.0.15\r\n"); err == nil {
		t.Fatal("ParseLineage accepted INFO without a lineage")
	}
}
