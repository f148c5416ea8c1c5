package main

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func testClients(t *testing.T, c *clustertest.Cluster) (*redis.Client, []redis.UniversalClient) {
	t.Helper()
	data, locks := dial(c)
	t.Cleanup(func() { closeAll(data, locks) })
	return data, locks
}

// TestEveryModeConserves runs every mode at 1x1 and 5x5, with locks on one
// master and on five, on real redis-server masters, and checks that each run
// sold something and lost or duplicated no item and no coin.
func TestEveryModeConserves(t *testing.T) {
	c := clustertest.Start(t, 5)
	data, locks := testClients(t, c)
	ctx := context.Background()
	ttl := 2 * time.Second
	if err := waitOlderThan(ctx, c, ttl); err != nil {
		t.Fatal(err)
	}
	cfgs, err := configs("1x1,5x5", time.Second, 300, ttl)
	if err != nil {
		t.Fatal(err)
	}
	var rows []Result
	for i, cfg := range cfgs {
		r, err := Run(ctx, data, locks, cfg, fmt.Sprintf("t%d:", i), nil)
		if err != nil {
			t.Fatalf("%s: %v", cfg.label(), err)
		}
		rows = append(rows, r)
		switch {
		case r.Conservation != nil:
			t.Errorf("%s: %v", cfg.label(), r.Conservation)
		case r.Errors > 0:
			t.Errorf("%s: %d errors, first: %s", cfg.label(), r.Errors, r.FirstError)
		case r.Listed == 0 || r.Sold == 0:
			t.Errorf("%s: listed %d, sold %d: no progress", cfg.label(), r.Listed, r.Sold)
		case r.Mode != Watch && r.Retries != 0:
			// Lock waits until the window ends: a lock call never fails
			// and starts over while masters answer.
			t.Errorf("%s: %d retries under a lock", cfg.label(), r.Retries)
		}
		if r.Lost > 0 {
			// Safe (nothing was written) but a sign of a machine so loaded
			// that a holder outlived its 2 s TTL.
			t.Logf("%s: %d leases lost before their writes", cfg.label(), r.Lost)
		}
		if n, err := data.Keys(ctx, fmt.Sprintf("t%d:*", i)).Result(); err != nil || len(n) > 0 && !onlyLocks(n) {
			t.Errorf("%s: keys left after the run: %v %v", cfg.label(), n, err)
		}
	}
	if t.Failed() {
		t.Log("\n" + table(rows))
	}
}

func onlyLocks(keys []string) bool {
	for _, k := range keys {
		if !strings.Contains(k, ":lock:") {
			return false
		}
	}
	return true
}

// TestCheckCatchesLossAndDuplication shows that the conservation check can
// fail: a coin created, an item duplicated, an item lost.
func TestCheckCatchesLossAndDuplication(t *testing.T) {
	s := clustertest.StartServer(t, clustertest.NoPersistence)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	ctx := context.Background()
	for _, tc := range []struct {
		name   string
		tamper func(m *Market) error
	}{
		{"nothing", func(*Market) error { return nil }},
		{"coin created", func(m *Market) error { return rdb.HIncrBy(ctx, m.userKey(buyer(0)), "funds", 1).Err() }},
		{"item duplicated", func(m *Market) error { return rdb.SAdd(ctx, m.invKey(buyer(0)), itemID(0, 1)).Err() }},
		{"item lost", func(m *Market) error { return rdb.SRem(ctx, m.invKey(seller(0)), itemID(0, 2)).Err() }},
		{"sale unpaid", func(m *Market) error { return rdb.HIncrBy(ctx, m.userKey(seller(0)), "funds", -7).Err() }},
	} {
		t.Run(tc.name, func(t *testing.T) {
			m := &Market{rdb: rdb, prefix: "chk:" + tc.name + ":", listers: 1, buyers: 1, itemsPerLister: 3, funds: 100}
			t.Cleanup(func() { _ = m.Clear(ctx) })
			if err := m.Seed(ctx); err != nil {
				t.Fatal(err)
			}
			w := watchStrategy{m}
			if _, err := w.list(ctx, ctx, seller(0), itemID(0, 0), 7); err != nil {
				t.Fatal(err)
			}
			if _, err := w.buy(ctx, ctx, buyer(0), seller(0), itemID(0, 0), 7); err != nil {
				t.Fatal(err)
			}
			if _, err := w.buy(ctx, ctx, buyer(0), seller(0), itemID(0, 0), 7); !errors.Is(err, errGone) {
				t.Fatalf("buying a sold item again: %v, want errGone", err)
			}
			if err := tc.tamper(m); err != nil {
				t.Fatal(err)
			}
			_, err := m.Check(ctx, 1, 1, 7)
			if tc.name == "nothing" {
				if err != nil {
					t.Fatalf("untouched market: %v", err)
				}
				return
			}
			if !errors.Is(err, ErrNotConserved) {
				t.Fatalf("Check after %s = %v, want ErrNotConserved", tc.name, err)
			}
		})
	}
}

// TestLostLeaseWritesNothing: under a lock, the writes are sent only while
// the lease is held; a holder slower than its TTL gets errLost instead.
func TestLostLeaseWritesNothing(t *testing.T) {
	s := clustertest.StartServer(t, clustertest.NoPersistence)
	rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
	t.Cleanup(func() { _ = rdb.Close() })
	c, err := redlock.New([]redis.UniversalClient{rdb})
	if err != nil {
		t.Fatal(err)
	}
	l := &lockStrategy{m: &Market{rdb: rdb, prefix: "lost:"}, c: c, ttl: 300 * time.Millisecond}
	t.Cleanup(func() { _ = l.close() })
	ctx := context.Background()
	if _, err := l.hold(ctx, ctx, []string{"a", "b"}, func(held func() error) error { return held() }); err != nil {
		t.Fatalf("a prompt holder: %v", err)
	}
	_, err = l.hold(ctx, ctx, []string{"a", "b"}, func(held func() error) error {
		time.Sleep(500 * time.Millisecond) // past the TTL
		return held()
	})
	if !errors.Is(err, errLost) {
		t.Fatalf("a holder slower than its TTL: %v, want errLost", err)
	}
}

func TestConfigsRejectBadInput(t *testing.T) {
	for _, tc := range []struct {
		sizes string
		items int
		d     time.Duration
	}{
		{"1x", 10, time.Second},
		{"0x1", 10, time.Second},
		{"1x65", 10, time.Second},
		{"axb", 10, time.Second},
		{"1x1", 0, time.Second},
		{"1x1", 10, 0},
	} {
		if _, err := configs(tc.sizes, tc.d, tc.items, time.Second); err == nil {
			t.Errorf("configs(%q, %v, %d) accepted", tc.sizes, tc.d, tc.items)
		}
	}
	cfgs, err := configs("1x1,5x5", time.Second, 10, time.Second)
	if err != nil || len(cfgs) != 10 {
		t.Fatalf("configs(1x1,5x5) = %d rows, %v; want 10 (watch, coarse and fine on 1 and 5 masters, twice)", len(cfgs), err)
	}
}
