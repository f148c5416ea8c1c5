package redisstore_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/redisstore"
)

// The paused-holder scenario against Redis (miniredis stands in for a real
// server here).
func ExampleNew() {
	m, err := miniredis.Run()
	if err != nil {
		panic(err)
	}
	defer m.Close()
	client := redis.NewClient(&redis.Options{Addr: m.Addr()})
	defer client.Close()

	ctx := context.Background()
	store := redisstore.New(client) // keys "quorumlock:fenced:<resource>"
	_ = store.Write(ctx, "report", 7, "worker-a", []byte("a's rows"))
	_ = store.Write(ctx, "report", 8, "worker-b", []byte("b's rows"))
	err = store.Write(ctx, "report", 7, "worker-a", []byte("a's late rows"))
	fmt.Println("late write stale:", errors.Is(err, fencing.ErrStaleToken))

	fmt.Println(client.HGetAll(ctx, "quorumlock:fenced:report").Val())
	// Output:
	// late write stale: true
	// map[highest:8 holder:worker-b value:b's rows]
}
