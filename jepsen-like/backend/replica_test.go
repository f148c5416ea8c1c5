package backend

import (
	"context"
	"errors"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// A replica detached once synced keeps what its master had and misses what
// the master is sent afterwards: the lagging replica a failover promotes.
func TestDetachWhenSyncedLeavesALaggingCopy(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	primary := clustertest.StartServer(t, clustertest.NoPersistence)
	replica := clustertest.StartServer(t, clustertest.NoPersistence)
	pc, rc := primary.Client(t), replica.Client(t)
	if err := pc.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	host, port, err := net.SplitHostPort(primary.Addr)
	if err != nil {
		t.Fatal(err)
	}
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	if err := DetachWhenSynced(ctx, replica.Addr, 20*time.Millisecond); err != nil {
		t.Fatalf("DetachWhenSynced: %v", err)
	}
	if err := pc.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if role, err := rc.Do(ctx, "ROLE").Slice(); err != nil || len(role) == 0 || role[0] != "master" {
		t.Fatalf("detached replica's ROLE: %v, %v; want master", role, err)
	}
	if v, err := rc.Get(ctx, "before").Result(); err != nil || v != "1" {
		t.Fatalf("the synced key on the detached replica: %q, %v", v, err)
	}
	if err := rc.Get(ctx, "after").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a key written after the detach reached the replica: %v", err)
	}
}

// A replica that never syncs (its master is gone) ends with ctx's error.
func TestDetachWhenSyncedGivesUpWithTheContext(t *testing.T) {
	replica := clustertest.StartServer(t, clustertest.NoPersistence)
	rc := replica.Client(t)
	ctx := context.Background()
	if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil { // nothing listens on port 1
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 300*time.Millisecond)
	defer cancel()
	if err := DetachWhenSynced(short, replica.Addr, 20*time.Millisecond); !errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("DetachWhenSynced with no master: %v; want context.DeadlineExceeded", err)
	}
}
