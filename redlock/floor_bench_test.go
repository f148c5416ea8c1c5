package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// BenchmarkRawQuorumFloor is the floor under any Redlock on these masters:
// SET NX PX on five masters in parallel, wait for three, then DEL on five,
// wait for three. No scripts, no ownership checks, no fencing.
func BenchmarkRawQuorumFloor(b *testing.B) {
	clients := newRig(b, 5).clients
	ctx := context.Background()
	done := make(chan error, 5)
	fan := func(f func(redis.UniversalClient) error) {
		for _, c := range clients {
			go func() { done <- f(c) }()
		}
		for range 3 {
			if err := <-done; err != nil {
				b.Fatal(err)
			}
		}
	}
	b.ResetTimer()
	for range b.N {
		fan(func(c redis.UniversalClient) error { return c.SetNX(ctx, "floor", "v", 10*time.Second).Err() })
		fan(func(c redis.UniversalClient) error { return c.Del(ctx, "floor").Err() })
		for range 2 {
			<-done
		}
		for range 2 {
			<-done
		}
	}
}
