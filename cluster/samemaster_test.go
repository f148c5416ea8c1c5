package cluster

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// One redis-server listed under two names is one master, not two: Check
// says so on both entries (issue 17, item 5).
func TestCheckFlagsOneServerListedTwice(t *testing.T) {
	ctx := context.Background()
	a, b := clustertest.StartServer(t, clustertest.AOFAlways), clustertest.StartServer(t, clustertest.AOFAlways)
	local := strings.Replace(a.URL(), "127.0.0.1", "localhost", 1)
	c, err := Dial(ctx, []string{a.URL(), local, b.URL(), a.URL() + "/1"})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.Check(ctx)
	const want = "masters 0, 1 and 3 are one server (the same run_id)"
	for _, i := range []int{0, 1, 3} {
		others := slices.DeleteFunc([]int{0, 1, 3}, func(m int) bool { return m == i })
		if !slices.Equal(st[i].SameAs, others) || st[i].Same != want || !slices.Contains(st[i].Warnings, want) {
			t.Errorf("master %d: SameAs %v, Same %q, warnings %q; want %v and %q", i, st[i].SameAs, st[i].Same, st[i].Warnings, others, want)
		}
	}
	if len(st[2].SameAs) != 0 || st[2].Same != "" {
		t.Errorf("independent master 2: %+v", st[2])
	}
}

// A master that replicates another listed master shares its replication id:
// the two are one replication history, not two independent masters.
func TestCheckFlagsAReplicaOfAnotherMaster(t *testing.T) {
	ctx := context.Background()
	a, b := clustertest.StartServer(t, clustertest.NoPersistence), clustertest.StartServer(t, clustertest.NoPersistence)
	c, err := Dial(ctx, []string{a.URL(), b.URL()})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	host, port, _ := strings.Cut(strings.TrimPrefix(a.URL(), "redis://"), ":")
	if err := c.Clients()[1].Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	// Wait (bounded) for the full sync: the replica takes the master's id then.
	deadline := time.Now().Add(20 * time.Second)
	for {
		info := c.Clients()[1].Info(ctx, "replication").Val()
		if strings.Contains(info, "master_link_status:up") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("replica never synced:\n%s", info)
		}
		time.Sleep(50 * time.Millisecond)
	}
	st := c.Check(ctx)
	const want = "masters 0 and 1 share one replication history (the same master_replid: one replicates the other)"
	if st[0].Same != want || !slices.Equal(st[0].SameAs, []int{1}) || st[1].Same != want || !slices.Equal(st[1].SameAs, []int{0}) {
		t.Fatalf("master and its replica: %q %v / %q %v; want %q", st[0].Same, st[0].SameAs, st[1].Same, st[1].SameAs, want)
	}
	if st[0].ReplID == "" || st[0].ReplID != st[1].ReplID {
		t.Fatalf("replication ids %q and %q", st[0].ReplID, st[1].ReplID)
	}
}
