package restart

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// Rule S, step 2: after every guard is acknowledged, each member is read
// again, and the scratch goes on only if each still carries no record but
// its guard. Its first reads are not enough: the probes that found the
// members record-free are different instants, one per master. Here masters
// 0 and 1 are flushed (a caller's probe of them finds no record), then
// synced and certified again from masters 2, 3 and 4; A's key lives on {2,
// 3, 4}; then masters 2 and 3 are flushed (a later probe of them finds no
// record either; master 4 does not answer the caller). Never more than two
// damaged masters at once. The scratch of {0, 1, 2, 3} must stop: 0 and 1
// carry certificates. Without the re-read, its guards are written on all
// four (0 and 1 no longer carry any scratch guard), 0 and 1 stay as they
// are and 2 and 3 are certified with no quarantine, so that a second
// holder of A's key counts them at once.
func TestScratchRereadsItsMembersAfterItsGuards(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 5)
	ms := members(t, c)
	if _, err := Scratch(ctx, ms, nil, 5, 3, buckets); err != nil {
		t.Fatal(err)
	}
	flush := func(idx ...int) {
		for _, i := range idx {
			if err := ms[i].RDB.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush(0, 1)
	now := func(time.Duration) error { return nil }
	for _, i := range []int{0, 1} {
		if _, err := Sync(ctx, ms[i], Sources{Masters: ms[2:], Certified: 3}, buckets, now); err != nil {
			t.Fatalf("sync of master %d: %v", i, err)
		}
	}
	for _, m := range ms[2:] {
		if err := m.RDB.Set(ctx, "k", "A", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	flush(2, 3)
	done, err := Scratch(ctx, ms[:4], nil, 5, 3, buckets)
	if !errors.Is(err, ErrNotScratch) || certified(t, ms[2]) || certified(t, ms[3]) {
		t.Fatalf("scratch of {0, 1 (certified again), 2, 3 (flushed)}: certified %v, %v; want ErrNotScratch and masters 2 and 3 uncertified", done, err)
	}
}
