package local

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A replica attached ahead (AttachReplica) follows its master, and
// detaching it later leaves the master's replication id as it was once
// attached: the clients, which saw the master only after the attach, see
// no new lineage. A Kill cuts it off first, so the restarted master gets no
// replica (nor a new replication id from one). The replica still lags from
// its detach on, as DetachReplica's own does.
func TestAttachedReplicaKeepsTheMastersReplicationID(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := start(t, Options{Masters: 1})
	m := b.masters[0]
	c := client(t, m)
	if err := m.AttachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	attached := replID(ctx, t, c)
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	// the write reached the replica: it follows
	if n, err := c.Do(ctx, "WAIT", 1, 2000).Int(); err != nil || n != 1 {
		t.Fatalf("WAIT: %d replicas, %v; want the attached one", n, err)
	}
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if got := replID(ctx, t, c); got != attached {
		t.Errorf("master_replid %s after the detach; want %s, as once attached", got, attached)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	r := client(t, m)
	if n, _ := r.Exists(ctx, "before").Result(); n != 1 {
		t.Error("the replica lacks what it followed")
	}
	if n, _ := r.Exists(ctx, "after").Result(); n != 0 {
		t.Error("the replica has a write made after its detach: it does not lag")
	}
}

// Kill cuts a following replica off before the master dies.
func TestKillCutsAFollowingReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := start(t, Options{Masters: 1})
	m := b.masters[0]
	if err := m.AttachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	m.mu.Lock()
	r := m.replica
	m.mu.Unlock()
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	rc := redis.NewClient(&redis.Options{Addr: r.addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer rc.Close()
	info, err := rc.Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "role:master") {
		t.Errorf("the replica after its master's kill: %q, %v; want it detached (role:master)", info, err)
	}
}

func replID(ctx context.Context, t *testing.T, c *redis.Client) string {
	t.Helper()
	info, err := c.Info(ctx, "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	for _, l := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(l, "master_replid:"); ok {
			return v
		}
	}
	t.Fatalf("no master_replid in %q", info)
	return ""
}
