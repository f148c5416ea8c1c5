package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// A master that restarted empty is named as quarantined, with why and when
// it votes again, by status and by a lock that needed it.
func TestQuarantinedMasterIsExplained(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "lock", "k", "--ttl", "2s")
	r.want(t, ExitOK, "first lock (marks every master)")
	ctl(t, c, "unlock", strings.TrimSpace(r.out)).want(t, ExitOK, "unlock")
	if err := c.Servers[1].Restart(clustertest.NoPersistence); err != nil {
		t.Fatal(err)
	}
	r = ctl(t, c, "status", "--longest-ttl", "1m")
	r.want(t, ExitOK, "status with one quarantined master")
	if !strings.Contains(r.out, "2 of 3 masters count, 2 needed: a lock can succeed now; 0 more may fail.") || !strings.Contains(r.out, "no: quarantined:") {
		t.Fatalf("status does not explain the quarantined master:\n%s", r.out)
	}
	j := parse[mastersJSON](t, ctl(t, c, "status", "--longest-ttl", "1m", "-o", "json"))
	if m := j.Masters[1]; m.Votes || !m.Quarantined || m.QuarantineReason == "" || m.QuarantineLeftS <= 0 {
		t.Fatalf("status -o json, master 1: %+v", m)
	}
	// With master 0 down too, a lock names both: one unreachable, one quarantined.
	if err := c.Servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	r = ctl(t, c, "lock", "k", "--ttl", "30s")
	r.want(t, ExitNoQuorum, "lock with one master down and one quarantined")
	if !strings.Contains(r.errOut, "master 0") || !strings.Contains(r.errOut, "connection refused") ||
		!strings.Contains(r.errOut, "master 1") || !strings.Contains(r.errOut, "quarantined") {
		t.Fatalf("lock does not say what each master is:\n%s", r.errOut)
	}
}
