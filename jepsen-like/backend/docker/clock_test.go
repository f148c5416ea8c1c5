package docker

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
)

// A master container's wall clock jumps with the clock shim: TIME moves, a
// key's PX expiry follows the shifted clock (a 60 s key is gone after a 1 h
// jump), the replica that takes the master's place on a failover keeps the
// master's offset, and Heal sets it back to 0.
func TestClockJumpInAContainer(t *testing.T) {
	shim, err := nemesis.BuildClockShim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	ctx, b, m := startOne(t, 2*time.Minute, Options{ClockShim: shim})
	c := func() *redis.Client { return dial(t, m.Addr()) }
	offset := func() time.Duration {
		now, err := c().Time(ctx).Result()
		if err != nil {
			t.Fatal(err)
		}
		return now.Sub(time.Now())
	}
	if d := offset(); d > 5*time.Second || d < -5*time.Second {
		t.Fatalf("with offset 0 the container's clock is %v off", d)
	}
	if err := m.DetachReplica(ctx); err != nil {
		t.Fatal(err)
	}
	if err := c().Set(ctx, "k", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := m.SetClockOffset(ctx, time.Hour); err != nil {
		t.Fatal(err)
	}
	if d := offset(); d < 59*time.Minute {
		t.Fatalf("TIME after a 1 h jump is %v ahead", d)
	}
	if err := c().Get(ctx, "k").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("a key with a 60 s PX after a 1 h jump: %v, want expired", err)
	}
	if err := m.Failover(ctx); err != nil {
		t.Fatal(err)
	}
	if err := waitPing(ctx, m.Addr()); err != nil {
		t.Fatal(err)
	}
	if d := offset(); d < 59*time.Minute {
		t.Fatalf("the replica in the master's place is %v ahead, want the master's 1 h", d)
	}
	if err := b.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	if d := offset(); d > 5*time.Second || d < -5*time.Second {
		t.Fatalf("after Heal the clock is %v off, want 0", d)
	}
	if err := c().Set(ctx, "j", "v", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if ttl, err := c().PTTL(ctx, "j").Result(); err != nil || ttl < 50*time.Second {
		t.Fatalf("PTTL after the clock came back: %v, %v", ttl, err)
	}
}

// Without the shim, SetClockOffset says so.
func TestClockJumpNeedsTheShim(t *testing.T) {
	m := &Master{b: &Backend{}, name: "m0"}
	if err := m.SetClockOffset(context.Background(), time.Second); !errors.Is(err, backend.ErrUnsupported) {
		t.Fatalf("SetClockOffset without the shim: %v, want ErrUnsupported", err)
	}
}
