package suite

import (
	"context"
	"fmt"
	"math/rand/v2"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// FenceBuckets is the fence bucket count of every client of a run
// (redlock.WithFenceBuckets): the suite knows it, so it records each lock
// key's bucket on the acquires' oks for the tokens checker.
const FenceBuckets = redlock.DefaultFenceBuckets

// bucketLoadBase is the first process number of the bucket loads, far above
// the workload's processes (slot + rejoins × clients).
const bucketLoadBase = 1_000_000

// bucketLabel is key's fence bucket as the history records it, "n/B".
func bucketLabel(key string) string {
	return fmt.Sprintf("%d/%d", keys.BucketOf(key, FenceBuckets), FenceBuckets)
}

// bucketSiblings returns n keys other than key in key's fence bucket:
// key/1, key/2, ... kept when they hash to its bucket.
func bucketSiblings(key string, n int) []string {
	want := keys.BucketOf(key, FenceBuckets)
	var out []string
	for i := 1; len(out) < n; i++ {
		k := fmt.Sprintf("%s/%d", key, i)
		if keys.BucketOf(k, FenceBuckets) == want {
			out = append(out, k)
		}
	}
	return out
}

// runBucketLoads runs cfg.BucketKeys bucket loads (workload.BucketLoad)
// until ctx ends: load i locks the i-th sibling of the workload key through
// slot i mod Clients's proxies (its network faults reach it), with a
// redlock.Client of its own, configured as the workload's but on the system
// clock (the acquire-pause nemesis stops the workload's processes only).
func runBucketLoads(ctx context.Context, cfg Config, e *env, rec *history.Recorder, wg *sync.WaitGroup) error {
	for i, key := range bucketSiblings(workloadKey, cfg.BucketKeys) {
		sl := e.slots[i%len(e.slots)]
		clients := make([]redis.UniversalClient, len(sl.proxies))
		for j, p := range sl.proxies {
			clients[j] = redis.NewClient(&redis.Options{
				Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 2,
				DialTimeout: cfg.TTL / 2, ReadTimeout: cfg.TTL, WriteTimeout: cfg.TTL,
			})
		}
		lc, err := redlock.New(clients, clientOptions(cfg, cfg.Logger.With("process", bucketLoadBase+i))...)
		if err != nil {
			return err
		}
		load := &workload.BucketLoad{ID: bucketLoadBase + i, Key: key, Bucket: bucketLabel(key), TTL: cfg.TTL,
			Client: lc, Rec: rec, Rand: rand.New(rand.NewPCG(cfg.Seed, uint64(bucketLoadBase+i))), Pause: cfg.TTL / 10}
		wg.Go(func() {
			defer func() {
				_ = lc.Close()
				for _, c := range clients {
					_ = c.Close()
				}
			}()
			load.Run(ctx)
		})
	}
	return nil
}
