package redlock

import (
	"context"
	"fmt"
	"strconv"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// Rule Q asks of the lambda set only that every live lease's end be at or
// below its TTL's entry. The acquire script writes the entry (as now + 2 TTL)
// only when it would otherwise fall short of the new lease's end; a wrong
// skip would leave a lease outliving its entry, and a quarantine computed
// from the set could end while that lease still counts the lost master. Each
// case sets the entry on every master, from the server's own clock, just
// before a grant, and then compares it with the key's expiry there
// (PEXPIRETIME): entries short by any amount must be raised to cover it, an
// entry that already covers it is left as it was.
func TestLambdaEntryCoversEveryGrantedLease(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	const ttl = 20 * time.Second
	member := strconv.FormatInt(ttl.Milliseconds(), 10)
	cases := []struct {
		name  string
		entry func(now int64) int64 // 0: no entry
		kept  bool                  // the grant must leave the entry as it was
	}{
		{name: "none", entry: func(int64) int64 { return 0 }},
		{name: "ended", entry: func(now int64) int64 { return now - 1 }},
		{name: "half a TTL ahead", entry: func(now int64) int64 { return now + ttl.Milliseconds()/2 }},
		{name: "a millisecond short of a TTL ahead", entry: func(now int64) int64 { return now + ttl.Milliseconds() - 1 }},
		{name: "ten TTLs ahead", entry: func(now int64) int64 { return now + 10*ttl.Milliseconds() }, kept: true},
	}
	for i, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			set := make([]int64, len(r.clients))
			for j, rc := range r.clients {
				if err := rc.ZRem(ctx, keys.Lambda, member).Err(); err != nil {
					t.Fatal(err)
				}
				now, err := rc.Time(ctx).Result()
				if err != nil {
					t.Fatal(err)
				}
				if set[j] = tc.entry(now.UnixMilli()); set[j] != 0 {
					if err := rc.ZAdd(ctx, keys.Lambda, redis.Z{Score: float64(set[j]), Member: member}).Err(); err != nil {
						t.Fatal(err)
					}
				}
			}
			key := fmt.Sprintf("lambda:%d", i)
			l, err := c.TryLock(ctx, key, ttl)
			if err != nil {
				t.Fatal(err)
			}
			defer func() { _ = l.Release(ctx) }()
			held := 0
			for j, rc := range r.clients {
				end, err := rc.PExpireTime(ctx, key).Result()
				if err != nil {
					t.Fatal(err)
				}
				if end < 0 {
					continue // its grant was not needed and has not arrived yet
				}
				held++
				score, err := rc.ZScore(ctx, keys.Lambda, member).Result()
				if err != nil {
					t.Fatalf("master %d: no lambda entry for %s after a grant: %v", j, member, err)
				}
				if int64(score) < end.Milliseconds() {
					t.Errorf("master %d: the lambda entry of %s is %d, before the lease's end %d", j, member, int64(score), end.Milliseconds())
				}
				if tc.kept && int64(score) != set[j] {
					t.Errorf("master %d: an entry already past the lease's end was rewritten: %d → %d", j, set[j], int64(score))
				}
			}
			if held < 3 {
				t.Fatalf("%d masters hold the granted key; want at least a quorum of 3", held)
			}
		})
	}
}

// Grants of one TTL in a row write the lambda set once, not once each: the
// first records now + 2 TTL, which covers the others (counted in every
// master's commandstats, which count a script's own calls too).
func TestGrantsOfOneTTLWriteTheLambdaSetOnce(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	warmUp(t, c)
	resetCommandStats(t, r)
	for i := range 20 {
		l, err := c.TryLock(ctx, fmt.Sprintf("once:%d", i), 30*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	wrote := 0
	for j, n := range commandCalls(t, r, "zadd") {
		if n > 1 {
			t.Errorf("master %d: %d ZADD for 20 grants of one new TTL; want 1", j, n)
		}
		wrote += n // 0 only on a master none of the 20 acquires reached yet
	}
	if wrote < 3 {
		t.Errorf("%d masters wrote the new TTL's lambda entry; want at least a quorum of 3", wrote)
	}
}

// resetCommandStats zeroes every master's INFO commandstats (CONFIG
// RESETSTAT), for commandCalls to count from.
func resetCommandStats(t *testing.T, r *rig) {
	t.Helper()
	for _, rc := range r.clients {
		if err := rc.ConfigResetStat(context.Background()).Err(); err != nil {
			t.Fatal(err)
		}
	}
}
