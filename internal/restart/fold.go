package restart

import (
	"context"
	_ "embed"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

//go:embed scripts/fold.lua
var foldSrc string

var foldScript = redis.NewScript(foldSrc)

// foldBatch is how many per-key counters one fold script moves: small
// enough that the master is never blocked for long (about a millisecond).
const foldBatch = 200

// CounterSpace is what one master holds of the fencing counters: the
// bucket count its clients use (0 when none is recorded yet), how many of
// those bucket counters exist, and how many per-key counters of an earlier
// version are left (docs/fencing.md, "Buckets").
type CounterSpace struct {
	Buckets int
	Present int
	Legacy  int
}

// ReadCounterSpace counts rdb's fencing counters: EXISTS over the recorded
// buckets, and a SCAN (never KEYS) for per-key counters.
func ReadCounterSpace(ctx context.Context, rdb redis.UniversalClient) (CounterSpace, error) {
	var cs CounterSpace
	b, err := rdb.Get(ctx, keys.FenceBuckets).Result()
	switch {
	case errors.Is(err, redis.Nil):
	case err != nil:
		return cs, err
	default:
		if cs.Buckets, err = strconv.Atoi(b); err != nil || cs.Buckets < 1 {
			return cs, fmt.Errorf("%s holds %q, not a bucket count", keys.FenceBuckets, b)
		}
	}
	for lo := 0; lo < cs.Buckets; lo += 4096 {
		names := make([]string, 0, 4096)
		for n := lo; n < min(lo+4096, cs.Buckets); n++ {
			names = append(names, keys.Bucket(n))
		}
		n, err := rdb.Exists(ctx, names...).Result()
		if err != nil {
			return cs, err
		}
		cs.Present += int(n)
	}
	err = eachLegacyBatch(ctx, rdb, 1000, func(batch []string) error {
		cs.Legacy += len(batch)
		return nil
	})
	return cs, err
}

// eachLegacyBatch calls fn with the names of rdb's per-key counters of an
// earlier version (string keys under keys.LegacyFencePrefix: a key of
// another type there is an operator's), found by SCAN (never KEYS), at most
// n at a time, and stops at fn's first error.
func eachLegacyBatch(ctx context.Context, rdb redis.UniversalClient, n int, fn func(batch []string) error) error {
	iter := rdb.ScanType(ctx, 0, keys.LegacyFencePrefix+"*", 1000, "string").Iterator()
	batch := make([]string, 0, n)
	for iter.Next(ctx) {
		if batch = append(batch, iter.Val()); len(batch) == n {
			if err := fn(batch); err != nil {
				return err
			}
			batch = batch[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(batch) == 0 {
		return nil
	}
	return fn(batch)
}

// FoldLegacyCounters moves every per-key counter of an earlier version on
// rdb into its key's bucket counter among buckets and deletes it, in atomic
// batches (scripts/fold.lua: a bucket is raised to the per-key counter
// before it goes, so no lock on this master ever reads a lower counter than
// before). The masters' recorded bucket count must be buckets (or none,
// then buckets is recorded). It returns how many counters were folded.
func FoldLegacyCounters(ctx context.Context, rdb redis.UniversalClient, buckets int) (int, error) {
	if buckets < 1 {
		return 0, fmt.Errorf("fold: %d buckets", buckets)
	}
	folded := 0
	err := eachLegacyBatch(ctx, rdb, foldBatch, func(batch []string) error {
		names := make([]string, 0, 1+2*len(batch))
		names = append(names, keys.FenceBuckets)
		for _, k := range batch {
			names = append(names, k, keys.Bucket(keys.BucketOf(strings.TrimPrefix(k, keys.LegacyFencePrefix), buckets)))
		}
		n, err := foldScript.Run(ctx, rdb, names, strconv.Itoa(buckets)).Int()
		if err != nil {
			return fmt.Errorf("fold: %w", err)
		}
		folded += n
		return nil
	})
	return folded, err
}
