package cli

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

func TestAuditFindsTTLlessLockAndStrayAndFixesTTL(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	ctx := context.Background()
	rcs := c.Clients(t)
	// The book's lock that never comes back: SETNX without EXPIRE, on every
	// master, with a lock value of the library (so that --fix-ttl may fix it).
	for _, rc := range rcs {
		if err := rc.SetNX(ctx, "lock:x", "00112233445566778899aabbccddeeff", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// A stray minority key (with a TTL), an orphan fencing counter, and a
	// plain key that is no lock.
	if err := rcs[2].Set(ctx, "lock:y", "holder-2", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rcs[0].Set(ctx, keys.Legacy("gone"), "41", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rcs[0].Set(ctx, "user:1", "alice", 0).Err(); err != nil {
		t.Fatal(err)
	}

	r := ctl(t, c, "audit", "-o", "json")
	r.want(t, ExitFailed, "audit with TTL-less locks")
	j := parse[auditJSON](t, r)
	kinds := map[string]int{}
	for _, f := range j.Findings {
		kinds[f.Kind+" "+f.Key]++
		if f.Key == "user:1" {
			t.Errorf("a plain key was reported: %+v", f)
		}
	}
	if kinds["no-ttl lock:x"] != 3 || kinds["stray lock:y"] != 1 || kinds["counter-only gone"] != 1 || j.Errors != 3 || j.Warnings != 1 {
		t.Fatalf("audit findings %v, errors %d, warnings %d:\n%s", kinds, j.Errors, j.Warnings, r.out)
	}

	// The table says what and how to fix; without --yes and a "no" nothing changes.
	r = invoke(t, map[string]string{EnvMasters: strings.Join(c.URLs(), ",")}, "n\n", "audit", "--fix-ttl", "1m")
	r.want(t, ExitFailed, "audit --fix-ttl, not confirmed")
	if !strings.Contains(r.out, "ERROR    lock:x on master 0") || !strings.Contains(r.out, "fix:") || !strings.Contains(r.errOut, "nothing changed") {
		t.Fatalf("audit table:\n%s\n%s", r.out, r.errOut)
	}
	for _, p := range pttls(t, c, "lock:x") {
		if p != -1 {
			t.Fatalf("PTTL %v after an unconfirmed fix", p)
		}
	}

	r = ctl(t, c, "audit", "--fix-ttl", "1m", "--yes", "-o", "json")
	r.want(t, ExitOK, "audit --fix-ttl --yes")
	if j := parse[auditJSON](t, r); j.Fixed != 3 || j.Errors != 0 {
		t.Fatalf("audit --fix-ttl: %+v", j)
	}
	for i, p := range pttls(t, c, "lock:x") {
		if p <= 50*time.Second || p > time.Minute {
			t.Fatalf("master %d: PTTL %v after --fix-ttl 1m", i, p)
		}
	}
	r = ctl(t, c, "audit", "--match", "lock:*", "-o", "json")
	r.want(t, ExitOK, "audit after the fix")
	for _, f := range parse[auditJSON](t, r).Findings {
		if f.Severity == inspect.SeverityError {
			t.Fatalf("error left after the fix: %+v", f)
		}
	}
}

func TestDoctorFlagsPersistenceAndEviction(t *testing.T) {
	good := clustertest.StartServer(t, clustertest.AOFAlways)
	bad := clustertest.StartServer(t, clustertest.NoPersistence)
	if err := bad.Client(t).ConfigSet(context.Background(), "maxmemory-policy", "allkeys-lru").Err(); err != nil {
		t.Fatal(err)
	}
	env := map[string]string{EnvMasters: good.URL() + "," + bad.URL()}
	r := invoke(t, env, "", "doctor", "-o", "json")
	r.want(t, ExitFailed, "doctor with an evicting master")
	j := parse[doctorJSON](t, r)
	find := func(m int, check, sev string) doctorFinding {
		for _, f := range j.Masters[m].Findings {
			if f.Check == check && f.Severity == sev {
				return f
			}
		}
		t.Fatalf("master %d: no %s finding %q in %+v", m, sev, check, j.Masters[m].Findings)
		return doctorFinding{}
	}
	if f := find(1, "persistence", "warning"); !strings.Contains(f.Message, "appendonly no") || f.Fix == "" {
		t.Fatalf("persistence finding: %+v", f)
	}
	if f := find(1, "maxmemory-policy", "error"); !strings.Contains(f.Message, "allkeys-lru") || !strings.Contains(f.Fix, "noeviction") {
		t.Fatalf("eviction finding: %+v", f)
	}
	find(0, "persistence", "ok")
	find(0, "maxmemory-policy", "ok")
	if j.Errors != 1 {
		t.Fatalf("doctor: %d errors, want 1: %+v", j.Errors, j)
	}
	// The durable, non-evicting master alone is healthy.
	r = invoke(t, map[string]string{EnvMasters: good.URL()}, "", "doctor")
	r.want(t, ExitOK, "doctor on a healthy master")
	if !strings.Contains(r.out, "0 error(s)") {
		t.Fatalf("doctor:\n%s", r.out)
	}
}
