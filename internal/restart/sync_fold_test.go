package restart

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Rule Y reads each source's counters atomically with its certificate and
// lineage; its per-key counters of an earlier version (SCAN, not atomic)
// are kept only when a second atomic read finds the same lineage and
// certificate. Here a token 50 of an earlier version lives in per-key
// counters on masters 0, 1 and 2; master 0 (the target) was flushed, and
// source 1 is flushed between its first read and the SCAN of its per-key
// counters (two damaged masters of five: within the fault model). Source 1
// then read nothing but was certified at its first read: kept, it would be
// one of the three certified sources and master 0 would be certified with
// its counter below 50. It must not count: two certified sources are left
// of the three needed.
func TestSyncSourceFlushedDuringItsFoldDoesNotCount(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 5)
	ms := members(t, c)
	if _, err := Scratch(ctx, ms, nil, 5, 3, buckets); err != nil {
		t.Fatal(err)
	}
	legacy := keys.Legacy("order:7")
	for _, m := range ms[:3] {
		if err := m.RDB.Set(ctx, legacy, "50", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms[0].RDB.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	admin := c.Servers[1].Client(t)
	hook := &clustertest.OnceBefore{
		Match: func(cmd redis.Cmder) bool { return cmd.Name() == "scan" },
		Do:    func() error { return admin.FlushAll(context.Background()).Err() },
	}
	ms[1].RDB.AddHook(hook)
	src := Sources{Masters: []Member{ms[1], ms[3], ms[4]}, Certified: 3}
	_, err := Sync(ctx, ms[0], src, buckets, func(time.Duration) error { return nil })
	if !hook.Fired() {
		t.Fatal("source 1's per-key counters were never scanned: the test must flush it there")
	}
	if err := hook.Err(); err != nil {
		t.Fatal(err)
	}
	b := keys.Bucket(keys.BucketOf("order:7", buckets))
	if !errors.Is(err, ErrTooFewSources) || certified(t, ms[0]) {
		t.Fatalf("sync from {1 (flushed during its read), 3, 4}: %v; master 0 certified %v with its counter at %d, below the token 50; want ErrTooFewSources",
			err, certified(t, ms[0]), counter(t, ms[0], b))
	}
}
