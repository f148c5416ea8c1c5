package restart

import (
	"context"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Rule R: the floor is above every counter read, also when a counter is
// ahead of the operator's clock (an earlier repair on a clock that was
// ahead, or a clock set back since): max(highest + 1, the clock), never the
// clock alone and never the highest counter itself. A floor at or below a
// counter lets a token after the repair repeat or undercut one before it.
func TestRepairFloorIsAboveACounterAheadOfTheClock(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 3)
	ms := members(t, c)
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	ahead := TimeFloor(now) + 5
	if err := ms[1].RDB.Set(ctx, keys.Bucket(4), ahead.String(), 0).Err(); err != nil {
		t.Fatal(err)
	}
	plan, all, err := PlanRepair(ctx, ms, buckets, now)
	if err != nil || plan.Highest != ahead || plan.Floor <= ahead {
		t.Fatalf("plan with a counter at %d, ahead of the clock's %d: %+v, %v; want a floor above the counter", ahead, TimeFloor(now), plan, err)
	}
	if done, err := Repair(ctx, ms, all); err != nil || len(done) != 3 {
		t.Fatalf("repair: %v, %v", done, err)
	}
	for _, m := range ms {
		if f := counter(t, m, keys.Floor); !certified(t, m) || f <= ahead {
			t.Fatalf("master %d after the repair: certified %v, floor %d; want a floor above %d", m.Index, certified(t, m), f, ahead)
		}
	}
}
