package local

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// A start FromSnapshot rolls the master back to its last Snapshot: what was
// written before it is back, what was written after is gone; a later start
// without persistence is empty again (the snapshot is set aside, never
// loaded by accident).
func TestRestartFromOlderSnapshot(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := start(t, Options{Masters: 1})
	m := b.Masters()[0]
	c := client(t, m)
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.FromSnapshot); err == nil {
		t.Fatal("a start from a snapshot that was never saved succeeded")
	}
	if err := m.Start(ctx, backend.NoPersistence); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.FromSnapshot); err != nil {
		t.Fatal(err)
	}
	if n, err := c.Exists(ctx, "before").Result(); err != nil || n != 1 {
		t.Fatalf("the rollback lost the snapshot's key: %d, %v", n, err)
	}
	if n, _ := c.Exists(ctx, "after").Result(); n != 0 {
		t.Fatal("the rollback kept a write made after the snapshot")
	}
	// a second snapshot of a master started from one
	if err := m.Snapshot(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.NoPersistence); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, "before").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a start without persistence after a snapshot: %v, want an empty master", err)
	}
}

// A replica promoted by Failover is a master from then on: killed and
// started again (empty, or from a snapshot), it takes writes instead of
// coming back as a read-only replica of the dead primary.
func TestPromotedReplicaRestartsAsMaster(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := start(t, Options{Masters: 1})
	m := b.Masters()[0]
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.NoPersistence); err != nil {
		t.Fatal(err)
	}
	c := client(t, m)
	info, err := c.Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "role:master") {
		t.Fatalf("the promoted replica restarted as: %q, %v", info, err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("a write to the restarted master: %v", err)
	}
}
