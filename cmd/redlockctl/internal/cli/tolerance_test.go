package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// --data-loss-tolerance 1 on five masters: every command counts against a
// quorum of 4. A master that lost its data (FLUSHALL) still counts (nothing
// is detected), two paused masters leave too few, and the flag refuses
// values the masters cannot give.
func TestDataLossToleranceFlagUsesTheTolerantQuorum(t *testing.T) {
	c := clustertest.Start(t, 5, clustertest.AOFAlways)
	defer c.ResumeAll()
	f1 := []string{"--data-loss-tolerance", "1", "--timeout", "300ms"}
	st := parse[mastersJSON](t, ctl(t, c, append(f1, "status", "-o", "json")...))
	if st.Quorum != 4 || st.Voting != 5 || st.Margin != 1 {
		t.Fatalf("status with f=1: quorum %d, voting %d, margin %d; want 4, 5, 1", st.Quorum, st.Voting, st.Margin)
	}
	r := ctl(t, c, append(f1, "lock", "k", "--ttl", "5s", "-o", "json")...)
	r.want(t, ExitOK, "lock with f=1")
	lk := parse[leaseJSON](t, r)
	if err := c.Clients(t)[0].FlushAll(t.Context()).Err(); err != nil {
		t.Fatal(err)
	}
	st = parse[mastersJSON](t, ctl(t, c, append(f1, "status", "-o", "json")...))
	if st.Voting != 5 || st.Masters[0].Quarantined {
		t.Fatalf("status with f=1 after master 0 lost its data: voting %d, master 0 %+v; want every master counting", st.Voting, st.Masters[0])
	}
	ctl(t, c, append(f1, "lock", "k", "--ttl", "5s")...).want(t, ExitNotAcquired, "lock of a held key with f=1 after one master lost it")
	for _, s := range c.Servers[3:] {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	ctl(t, c, append(f1, "status")...).want(t, ExitNoQuorum, "status with f=1 and 2 of 5 paused")
	r = ctl(t, c, append(f1, "extend", lk.Handle, "--ttl", "5s")...)
	r.want(t, ExitNoQuorum, "extend with f=1 and 2 of 5 paused (master 0 lost the key)")
	if !strings.Contains(r.errOut, "4 needed") {
		t.Fatalf("extend with f=1 does not count against 4:\n%s", r.errOut)
	}
	ctl(t, c, "--data-loss-tolerance", "-1", "status").want(t, ExitUsage, "--data-loss-tolerance -1")
	ctl(t, c, "--data-loss-tolerance", "5", "status").want(t, ExitUsage, "--data-loss-tolerance 5 on 5 masters")
}
