package docker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		// testcontainers' Docker client keeps idle HTTP connections to the daemon.
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

// The Docker backend's faults on one master container. CI has Docker: a
// missing daemon fails this test, it never skips.
func TestFaults(t *testing.T) {
	ctx, _, m := startOne(t, 2*time.Minute, Options{Persistence: backend.AOFAlways})
	c := func() *redis.Client { return dial(t, m.Addr()) }
	if err := c().Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancelShort := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c().Ping(short).Err()
	cancelShort()
	if err == nil {
		t.Fatal("a paused container answered")
	}
	if err := m.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	// AOF always: the same container comes back with its data, at the
	// address read again after the start.
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.AOFAlways); err != nil {
		t.Fatal(err)
	}
	if got, err := c().Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after an AOF restart: %q, %v", got, err)
	}
	// Without persistence an empty container takes its place.
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.NoPersistence); err != nil {
		t.Fatal(err)
	}
	if err := c().Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after a restart without persistence: %v, want redis.Nil", err)
	}
	// A lagging replica takes over.
	if err := c().Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c().Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	r := c()
	if n, _ := r.Exists(ctx, "before", "after").Result(); n != 1 {
		t.Fatalf("the promoted replica has %d of the two keys, want only the one before it was detached", n)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := r.DBSize(ctx).Result(); n != 0 {
		t.Fatalf("%d keys after FLUSHALL", n)
	}
	if err := m.SetClockOffset(ctx, time.Second); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("clock offset in a container: %v, want ErrUnsupported", err)
	}
}

// Every master is published on 127.0.0.1 only.
func TestPublishedOnLoopbackOnly(t *testing.T) {
	ctx, _, m := startOne(t, time.Minute, Options{})
	info, err := m.ctr.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	bindings := info.NetworkSettings.Ports[redisPort]
	if len(bindings) == 0 {
		t.Fatal("6379/tcp is not published")
	}
	for _, pb := range bindings {
		if pb.HostIP != loopback {
			t.Errorf("published on %v, want 127.0.0.1 only", pb.HostIP)
		}
	}
}
