package restart

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Counters is what a certification copies onto a master: every bucket
// counter, the token floor and the lambda set (TTL in ms → expiry in server
// ms). All three only grow, so merging takes maxima.
type Counters struct {
	Buckets map[int]fencing.Token
	Floor   fencing.Token
	Lambda  map[int64]int64
}

// Merge raises c to the maxima of c and o.
func (c *Counters) Merge(o Counters) {
	if c.Buckets == nil {
		c.Buckets = map[int]fencing.Token{}
	}
	if c.Lambda == nil {
		c.Lambda = map[int64]int64{}
	}
	for n, v := range o.Buckets {
		c.Buckets[n] = max(c.Buckets[n], v)
	}
	for ttl, exp := range o.Lambda {
		c.Lambda[ttl] = max(c.Lambda[ttl], exp)
	}
	c.Floor = max(c.Floor, o.Floor)
}

// Highest is the largest counter or floor.
func (c Counters) Highest() fencing.Token {
	h := c.Floor
	for _, v := range c.Buckets {
		h = max(h, v)
	}
	return h
}

// FoldLegacy reads every per-key counter of an earlier version on rdb
// (SCAN, never KEYS) and folds each into its bucket among buckets. It is not
// atomic: callers read the master's State before and after and keep the
// result only if its lineage and records did not change.
func (c *Counters) FoldLegacy(ctx context.Context, rdb redis.UniversalClient, buckets int) error {
	if c.Buckets == nil {
		c.Buckets = map[int]fencing.Token{}
	}
	return eachLegacyBatch(ctx, rdb, 500, func(batch []string) error {
		vals, err := rdb.MGet(ctx, batch...).Result()
		if err != nil {
			return err
		}
		for n, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue // gone since the SCAN
			}
			t, err := fencing.ParseToken(s)
			if err != nil {
				return fmt.Errorf("%s: %w", batch[n], err)
			}
			b := keys.BucketOf(strings.TrimPrefix(batch[n], keys.LegacyFencePrefix), buckets)
			c.Buckets[b] = max(c.Buckets[b], t)
		}
		return nil
	})
}

// Raise raises rdb's counters to at least c (never lowers any), in atomic
// chunks of at most 500 counters.
func Raise(ctx context.Context, rdb redis.UniversalClient, c Counters) error {
	var lambda []any
	ttls := make([]int64, 0, len(c.Lambda))
	for ttl := range c.Lambda {
		ttls = append(ttls, ttl)
	}
	slices.Sort(ttls)
	for _, ttl := range ttls {
		lambda = append(lambda, strconv.FormatInt(c.Lambda[ttl], 10), strconv.FormatInt(ttl, 10))
	}
	names := []string{}
	vals := []string{}
	if c.Floor > 0 {
		names, vals = append(names, keys.Floor), append(vals, c.Floor.String())
	}
	ns := make([]int, 0, len(c.Buckets))
	for n := range c.Buckets {
		ns = append(ns, n)
	}
	slices.Sort(ns)
	for _, n := range ns {
		names, vals = append(names, keys.Bucket(n)), append(vals, c.Buckets[n].String())
	}
	for first := true; first || len(names) > 0; first = false {
		k := min(len(names), 500)
		args := append([]any{len(lambda) / 2}, lambda...)
		for _, v := range vals[:k] {
			args = append(args, v)
		}
		if err := raiseScript.Run(ctx, rdb, append([]string{keys.Lambda}, names[:k]...), args...).Err(); err != nil {
			return fmt.Errorf("raising counters: %w", err)
		}
		names, vals, lambda = names[k:], vals[k:], nil
	}
	return nil
}
