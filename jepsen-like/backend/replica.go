package backend

import (
	"context"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// DetachWhenSynced waits until the replica at addr reports its link to its
// master up (its first sync is done), then detaches it (REPLICAOF NO ONE):
// from then on it keeps what it had and misses every later write, as a
// lagging replica does. It polls every pollEvery (which must be positive)
// and returns ctx's error, wrapped, if the replica never syncs.
func DetachWhenSynced(ctx context.Context, addr string, pollEvery time.Duration) error {
	if err := WaitSynced(ctx, addr, pollEvery); err != nil {
		return err
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("detach: %w", err)
	}
	return nil
}

// WaitSynced waits until the replica at addr reports its link to its master
// up (its first sync is done), polling every pollEvery (which must be
// positive); it returns ctx's error, wrapped, if the replica never syncs.
func WaitSynced(ctx context.Context, addr string, pollEvery time.Duration) error {
	if pollEvery <= 0 {
		return fmt.Errorf("poll interval %v is not positive", pollEvery)
	}
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	for {
		info, err := c.Info(ctx, "replication").Result()
		if err == nil && strings.Contains(info, "master_link_status:up") {
			break
		}
		select {
		case <-ctx.Done():
			return fmt.Errorf("never synced: %w", ctx.Err())
		case <-time.After(pollEvery):
		}
	}
	return nil
}
