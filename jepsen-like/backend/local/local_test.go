package local

import (
	"context"
	"errors"

	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T, o Options) *Backend {
	t.Helper()
	b, err := Start(context.Background(), o)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = b.Close() })
	return b
}

func client(t *testing.T, m backend.Master) *redis.Client {
	t.Helper()
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestFaults(t *testing.T) {
	ctx := context.Background()
	b := start(t, Options{Masters: 2, Persistence: backend.AOFAlways})
	m := b.Masters()[0]
	c := client(t, m)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Pause(ctx); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	if err := c.Ping(short).Err(); err == nil {
		t.Fatal("a paused master answered")
	}
	cancel()
	if err := m.Resume(ctx); err != nil {
		t.Fatal(err)
	}
	// Kill and start with AOF always: the key survives.
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.AOFAlways); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after an AOF restart GET = %q, %v", got, err)
	}
	// Kill and start without persistence: empty.
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Start(ctx, backend.NoPersistence); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("after a restart without persistence: %v, want redis.Nil", err)
	}
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Flush(ctx); err != nil {
		t.Fatal(err)
	}
	if n, _ := c.Exists(ctx, "k").Result(); n != 0 {
		t.Fatal("FLUSHALL left the key")
	}
	// Heal starts a killed master and resumes a paused one.
	if err := m.Kill(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Masters()[1].Pause(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	for _, mm := range b.Masters() {
		if err := client(t, mm).Ping(ctx).Err(); err != nil {
			t.Fatalf("%s after Heal: %v", mm.Name(), err)
		}
	}
}

// failover: the replica lags from the moment it is detached; after the
// failover the master's address answers with it.
func TestFailoverToLaggingReplica(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	b := start(t, Options{Masters: 1})
	m := b.Masters()[0]
	old := m.Addr()
	c := client(t, m)
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c.Set(ctx, "after", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	if m.Addr() == old {
		t.Fatal("the address did not move to the replica")
	}
	r := client(t, m)
	if n, _ := r.Exists(ctx, "before").Result(); n != 1 {
		t.Fatal("the replica lacks what it synced")
	}
	if n, _ := r.Exists(ctx, "after").Result(); n != 0 {
		t.Fatal("the replica has a write made after it was detached: it does not lag")
	}
	info, err := r.Info(ctx, "replication").Result()
	if err != nil || !strings.Contains(info, "role:master") {
		t.Fatalf("the promoted replica: %q, %v", info, err)
	}
}

// The clock shim: a master with offset +N s reports TIME N s ahead, and a
// key with PX expires when its shifted clock passes the deadline.
func TestClockShim(t *testing.T) {
	ctx := context.Background()
	shim, err := nemesis.BuildClockShim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b := start(t, Options{Masters: 1, ClockShim: shim})
	m := b.Masters()[0]
	c := client(t, m)
	before, err := c.Time(ctx).Result()
	if err != nil {
		t.Fatal(err)
	}
	if d := before.Sub(time.Now()); d > 5*time.Second || d < -5*time.Second {
		t.Fatalf("with offset 0 the master's clock is %v off", d)
	}
	if err := c.Set(ctx, "k", "v", 60*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.SetClockOffset(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for {
		now, err := c.Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		if now.Sub(time.Now()) > 59*time.Minute {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("TIME did not jump: %v", now)
		}
		time.Sleep(5 * time.Millisecond)
	}
	if err := c.Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a key with a 60 s PX after a 1 h jump: %v, want expired", err)
	}
	// Back to 0: the clock returns, and a fresh key lives its PX.
	if err := m.SetClockOffset(ctx, 0); err != nil {
		t.Fatal(err)
	}
	time.Sleep(50 * time.Millisecond)
	if err := c.Set(ctx, "j", "v", 60*time.Second).Err(); err != nil {
		t.Fatal(err)
	}
	ttl, err := c.PTTL(ctx, "j").Result()
	if err != nil || ttl < 50*time.Second {
		t.Fatalf("PTTL after the clock came back: %v, %v", ttl, err)
	}
}

func TestBadOptions(t *testing.T) {
	if _, err := Start(context.Background(), Options{Masters: -1}); err == nil {
		t.Fatal("-1 masters accepted")
	}
	if _, err := Start(context.Background(), Options{Binary: "/nonexistent/redis-server"}); err == nil {
		t.Fatal("a missing binary accepted")
	}
	b := start(t, Options{Masters: 1})
	if err := b.Masters()[0].SetClockOffset(context.Background(), time.Second); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("clock offset without the shim: %v, want ErrUnsupported", err)
	}
	if err := b.Masters()[0].Disconnect(context.Background()); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("a network cut of a local master: %v, want ErrUnsupported", err)
	}
	if err := b.Masters()[0].Reconnect(context.Background()); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("a reconnect of a local master: %v, want ErrUnsupported", err)
	}
}
