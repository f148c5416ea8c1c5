package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/redlock"
)

// Three of five masters without persistence restart empty: more than a
// majority quorum survives. Locks with master 4 paused are refused and say
// why; repair's dry run says what it would do and changes nothing; repair
// --yes --wait 0 certifies every master with a floor above every earlier
// token, and the next lock's token is above the last one before the loss.
func TestRepairBringsLockingBackAfterAMajorityLoss(t *testing.T) {
	c := clustertest.Start(t, 5)
	t.Cleanup(c.ResumeAll)
	var last fencing.Token
	for range 3 {
		r := ctl(t, c, "lock", "k", "--ttl", "2s", "-o", "json")
		r.want(t, ExitOK, "lock before the loss")
		l := parse[leaseJSON](t, r)
		last = fencing.Token(l.Token)
		ctl(t, c, "unlock", l.Handle).want(t, ExitOK, "unlock")
	}
	for _, s := range c.Servers[:3] {
		if err := s.Restart(clustertest.NoPersistence); err != nil {
			t.Fatal(err)
		}
	}
	if err := c.Servers[4].Pause(); err != nil {
		t.Fatal(err)
	}
	r := ctl(t, c, "lock", "k", "--ttl", "2s")
	r.want(t, ExitNoQuorum, "lock after three of five masters restarted empty")
	if err := c.Servers[4].Resume(); err != nil {
		t.Fatal(err)
	}

	dry := ctl(t, c, "repair")
	dry.want(t, ExitOK, "repair, dry run")
	if !strings.Contains(dry.out, "would raise every reachable master's counters to the floor") || !strings.Contains(dry.out, "not certified yet") {
		t.Fatalf("repair's dry run:\n%s", dry.out)
	}
	// The last token may have reached only masters that lost it (its round
	// decided before masters 3 and 4 answered): the report's highest counter
	// is what the masters hold now, and the floor is above every token.
	var kept uint64
	for _, v := range get(t, c, keys.Bucket(keys.BucketOf("k", redlock.DefaultFenceBuckets)))[3:] {
		if n, err := fencing.ParseToken(v); err == nil {
			kept = max(kept, uint64(n))
		}
	}
	j := parse[repairJSON](t, ctl(t, c, "repair", "-o", "json"))
	if j.Applied || j.Floor <= uint64(last) || j.Highest < kept || len(j.Masters) != 5 || j.Masters[0].Certified || !j.Masters[3].Certified {
		t.Fatalf("repair -o json, dry run: %+v", j)
	}
	applied := parse[repairJSON](t, ctl(t, c, "repair", "--yes", "--wait", "0", "-o", "json"))
	if !applied.Applied || len(applied.Certified) != 5 || applied.Floor <= uint64(last) {
		t.Fatalf("repair --yes: %+v", applied)
	}
	if err := c.Servers[4].Pause(); err != nil { // the lock needs the repaired masters
		t.Fatal(err)
	}
	r = ctl(t, c, "lock", "k", "--ttl", "2s", "-o", "json")
	r.want(t, ExitOK, "lock after the repair")
	if l := parse[leaseJSON](t, r); fencing.Token(l.Token) <= fencing.Token(applied.Floor) || fencing.Token(l.Token) <= last {
		t.Fatalf("token %d after the repair; want above the floor %d and the last token %d", l.Token, applied.Floor, last)
	}
	ctl(t, c, "repair", "--yes", "--wait", "-1s").want(t, ExitUsage, "a negative --wait")
}
