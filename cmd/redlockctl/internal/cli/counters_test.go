package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Per-key counters of an earlier version on a majority: `counters` and
// `status` count them, `doctor` says how to fold them, `--fold` alone
// changes nothing, `--fold --yes` folds them into their buckets and deletes
// them, and the next token of their key is still above the old counter.
func TestCountersFoldsOldPerKeyCounters(t *testing.T) {
	c := clustertest.Start(t, 5, clustertest.AOFAlways)
	ctx := t.Context()
	for i, rc := range c.Clients(t) {
		if i >= 3 {
			break
		}
		for _, k := range []string{"invoice:7", "invoice:8"} {
			if err := rc.Set(ctx, keys.Legacy(k), "41", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	co := parse[countersJSON](t, ctl(t, c, "counters", "-o", "json"))
	if co.Masters[0].Legacy != 2 || co.Masters[4].Legacy != 0 || co.Folded {
		t.Fatalf("counters before the fold: %+v", co)
	}
	if r := ctl(t, c, "status"); !strings.Contains(r.out, "6 per-key counters of an earlier version left") {
		t.Fatalf("status does not report the old counters:\n%s", r.out)
	}
	if r := ctl(t, c, "doctor"); !strings.Contains(r.out, "redlockctl counters --fold --yes") {
		t.Fatalf("doctor does not say how to fold:\n%s", r.out)
	}
	ctl(t, c, "counters", "--yes").want(t, ExitUsage, "--yes without --fold")
	dry := ctl(t, c, "counters", "--fold")
	dry.want(t, ExitOK, "counters --fold (dry run)")
	if !strings.Contains(dry.out, "--fold --yes would fold 6 per-key counters") {
		t.Fatalf("dry run output:\n%s", dry.out)
	}
	if v := get(t, c, keys.Legacy("invoice:7"))[0]; v != "41" {
		t.Fatalf("the dry run changed master 0's per-key counter to %q", v)
	}
	r := ctl(t, c, "counters", "--fold", "--yes", "-o", "json")
	r.want(t, ExitOK, "counters --fold --yes")
	co = parse[countersJSON](t, r)
	for i, m := range co.Masters {
		if m.Legacy != 0 || (i < 3 && (m.Moved != 2 || m.Present == 0)) {
			t.Fatalf("master %d after the fold: %+v", i, m)
		}
	}
	for i, v := range get(t, c, keys.Legacy("invoice:7")) {
		if v != "" {
			t.Fatalf("master %d still holds the per-key counter %q", i, v)
		}
	}
	lk := ctl(t, c, "lock", "invoice:7", "--ttl", "5s", "-o", "json")
	lk.want(t, ExitOK, "lock after the fold")
	if tok := parse[leaseJSON](t, lk).Token; tok <= 41 {
		t.Fatalf("token %d after the fold; want above the old counter 41", tok)
	}
}
