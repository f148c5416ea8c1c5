package docker

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// A replica partitioned from its master by the network: it stays a replica
// (its link down, not detached), no write after the cut reaches it (WAIT
// counts no replica), and Failover promotes it with the data from before
// the cut only.
func TestReplicaPartitionedFromItsMaster(t *testing.T) {
	ctx, _, m := startOne(t, 2*time.Minute, Options{Persistence: backend.NoPersistence})
	client := func(addr string) *redis.Client { return dial(t, addr) }
	master := client(m.Addr())
	if err := master.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	raddr, err := hostAddr(ctx, m.replica)
	if err != nil {
		t.Fatal(err)
	}
	replica := client(raddr)
	if err := master.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if acked, err := master.Wait(ctx, 1, 500*time.Millisecond).Result(); err != nil || acked != 0 {
		t.Fatalf("WAIT after the partition: %d replicas acknowledged (%v), want 0", acked, err)
	}
	if role := replicationField(t, replica, "role"); role != "slave" {
		t.Fatalf("the partitioned replica's role is %q, want slave (partitioned, not detached)", role)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	promoted := client(m.Addr())
	if role := replicationField(t, promoted, "role"); role != "master" {
		t.Fatalf("after Failover the role is %q, want master", role)
	}
	if n, _ := promoted.Exists(ctx, "before", "after").Result(); n != 1 || promoted.Exists(ctx, "before").Val() != 1 {
		t.Fatalf("the promoted replica has %d of the two keys, want only the one written before the partition", n)
	}
	if err := promoted.Set(ctx, "new", "1", 0).Err(); err != nil {
		t.Fatalf("the promoted replica refuses writes: %v", err)
	}
}

func replicationField(t *testing.T, c *redis.Client, name string) string {
	t.Helper()
	info, err := c.Info(context.Background(), "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(info, "\n") {
		if v, ok := strings.CutPrefix(strings.TrimSpace(line), name+":"); ok {
			return v
		}
	}
	t.Fatalf("no %s in INFO replication", name)
	return ""
}
