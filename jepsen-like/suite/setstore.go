package suite

import (
	"context"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend/local"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
)

// startSetStore starts the set workload's store: one local redis-server of
// its own (whatever the backend), outside every fault, reached directly.
// stop stops it.
func startSetStore(ctx context.Context) (workload.RedisSet, func(), error) {
	b, err := local.Start(ctx, local.Options{Masters: 1})
	if err != nil {
		return workload.RedisSet{}, nil, fmt.Errorf("suite: the set workload's store: %w", err)
	}
	c := redis.NewClient(&redis.Options{Addr: b.Masters()[0].Addr(), MaxRetries: -1})
	return workload.RedisSet{C: c}, func() { _ = c.Close(); _ = b.Close() }, nil
}

// finalReader is the process number of the set's final read: one above
// every client process of the history.
func finalReader(events []history.Event) int {
	id := 0
	for _, e := range events {
		id = max(id, e.Process+1)
	}
	return id
}
