package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// status says what `lock` will do now, rounds that every master grants
// included. A fresh cluster counts (the first lock certifies it). Masters
// that carry only an earlier version's markers are not certified yet (a
// client certifies them once the longest TTL has passed), so none counts by
// itself, yet a lock succeeds because every master grants.
func TestStatusSaysWhatLockWillDo(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.NoPersistence)
	r := ctl(t, c, "status")
	r.want(t, ExitOK, "status on a fresh cluster")
	if !strings.Contains(r.out, "3 of 3 masters count, 2 needed: a lock can succeed now") || !strings.Contains(r.out, "a fresh cluster: the first lock certifies it") {
		t.Fatalf("status on a fresh cluster:\n%s", r.out)
	}
	for _, rc := range c.Clients(t) {
		if err := rc.Set(t.Context(), keys.OldEpoch, "an earlier version's marker", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	r = ctl(t, c, "status")
	r.want(t, ExitOK, "status on uncertified masters that all answer")
	const allGrant = "0 of 3 masters count, 2 needed: a lock can succeed now, but only in a round every master grants (every master answers); one master failing or refusing makes it fail."
	if !strings.Contains(r.out, allGrant) {
		t.Fatalf("status output:\n%s\nwant %q", r.out, allGrant)
	}
	j := parse[mastersJSON](t, ctl(t, c, "status", "-o", "json"))
	if j.Verdict != "all-grant" || j.Voting != 0 || j.Quorum != 2 || j.Margin != -2 {
		t.Fatalf("status -o json: %+v; want verdict all-grant, voting 0, quorum 2, margin -2", j)
	}
	// What status promised: the lock succeeds.
	ctl(t, c, "lock", "k", "--ttl", "2s").want(t, ExitOK, "lock where status said a round every master grants succeeds")

	// One master down: no round can be granted by every master.
	if err := c.Servers[2].Kill(); err != nil {
		t.Fatal(err)
	}
	r = ctl(t, c, "status")
	r.want(t, ExitNoQuorum, "status with uncertified masters and one dead")
	const none = "0 of 3 masters count, 2 needed: a lock fails now (too few masters count, and a round every master grants needs every master to answer as a master)."
	if !strings.Contains(r.out, none) || !strings.Contains(r.errOut, "no quorum: 0 of 3 masters count, 2 needed") {
		t.Fatalf("status output:\n%s%s\nwant %q", r.out, r.errOut, none)
	}
	ctl(t, c, "lock", "k2", "--ttl", "2s").want(t, ExitNoQuorum, "lock where status said it fails")
}

// One server listed twice is counted once, and status says that a lock
// refuses such a list (issue 17, item 5).
func TestStatusCountsOneServerOnce(t *testing.T) {
	c := clustertest.Start(t, 2, clustertest.AOFAlways)
	a := c.Servers[0].URL()
	list := strings.Join([]string{a, strings.Replace(a, "127.0.0.1", "localhost", 1), c.Servers[1].URL()}, ",")
	env := map[string]string{EnvMasters: list}
	r := invoke(t, env, "", "status")
	r.want(t, ExitNoQuorum, "status with one server listed twice")
	const same = "masters 0 and 1 are one server (the same run_id)"
	if strings.Contains(r.out, "3 of 3") || !strings.Contains(r.out, "2 of 3 masters count, 2 needed: a lock fails now: "+same+"; each server counts once, and a list that names one twice is refused: fix the master list.") ||
		!strings.Contains(r.out, "no: the same server as master 0") || !strings.Contains(r.errOut, same) {
		t.Fatalf("status output:\n%s%s", r.out, r.errOut)
	}
	j := parse[mastersJSON](t, invoke(t, env, "", "status", "-o", "json"))
	if j.Verdict != "same-server" || j.Voting != 2 || j.Masters[1].Votes || len(j.Masters[1].SameAs) != 1 || j.Masters[1].SameAs[0] != 0 {
		t.Fatalf("status -o json: %+v", j)
	}
}

// FSYNC is shown only where AOF is on: appendfsync means nothing without it.
func TestStatusShowsFsyncOnlyWithAOF(t *testing.T) {
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	r := invoke(t, map[string]string{EnvMasters: plain.URL()}, "", "status")
	for l := range strings.Lines(r.out) {
		if strings.HasPrefix(l, "0  redis://") && (strings.Contains(l, "everysec") || !strings.Contains(l, "false")) {
			t.Fatalf("AOF off, yet an fsync policy is shown:\n%s", r.out)
		}
	}
}
