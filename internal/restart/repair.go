package restart

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// FloorEpoch is where TimeFloor counts from.
var FloorEpoch = time.Date(2026, 1, 1, 0, 0, 0, 0, time.UTC)

// TimeFloor is the token floor a repair at now raises: microseconds since
// FloorEpoch. Counters grow by one per acquisition, far slower than one per
// microsecond, so a floor taken later than every earlier acquisition's
// counter reading is above every earlier token, as long as the operator's
// clock is not behind (docs/fencing.md, "Repair").
func TimeFloor(now time.Time) fencing.Token {
	return fencing.Token(now.Sub(FloorEpoch).Microseconds())
}

// RepairPlan is what a repair would do.
type RepairPlan struct {
	Floor     fencing.Token // the floor every master gets
	Highest   fencing.Token // the highest counter read on any master
	Reachable []int         // the masters it certifies
	Errs      []error       // the masters it cannot reach
}

// PlanRepair reads every master's counters (rule R of docs/safety.md) and
// says what a repair at now would do.
func PlanRepair(ctx context.Context, masters []Member, buckets int, now time.Time) (RepairPlan, Counters, error) {
	var all Counters
	var plan RepairPlan
	states, errs := each(masters, func(mb Member) (State, error) { return Inspect(ctx, mb.RDB, buckets) })
	for i, st := range states {
		if errs[i] != nil {
			plan.Errs = append(plan.Errs, fmt.Errorf("master %d: %w", masters[i].Index, errs[i]))
			continue
		}
		c := st.Counters
		if err := c.FoldLegacy(ctx, masters[i].RDB, buckets); err != nil {
			plan.Errs = append(plan.Errs, fmt.Errorf("master %d: %w", masters[i].Index, err))
			continue
		}
		all.Merge(c)
		plan.Reachable = append(plan.Reachable, masters[i].Index)
	}
	if len(plan.Reachable) == 0 {
		return plan, all, errors.New("no master answered")
	}
	plan.Highest = all.Highest()
	plan.Floor = max(plan.Highest+1, TimeFloor(now))
	if plan.Floor > fencing.MaxToken {
		return plan, all, fmt.Errorf("the floor %d would pass the largest token %d", plan.Floor, fencing.MaxToken)
	}
	all.Floor = plan.Floor
	return plan, all, nil
}

// Repair raises the counters of every master of the plan to c (with the
// plan's floor) and certifies it, guarded by a sync guard. It returns the
// masters certified.
func Repair(ctx context.Context, masters []Member, c Counters) ([]int, error) {
	_, errs := each(masters, func(mb Member) (string, error) {
		st, err := Inspect(ctx, mb.RDB, 0)
		if err != nil {
			return "", err
		}
		nonce := newNonce()
		guardKey := keys.SyncPrefix + nonce
		guard := st.Lineage.String() + " repair " + nonce
		if _, err := writeGuard(ctx, mb.RDB, guardKey, st.Lineage, guard, SyncGuardTTL, false); err != nil {
			return "", err
		}
		if err := Raise(ctx, mb.RDB, c); err != nil {
			return "", err
		}
		return certify(ctx, mb.RDB, guardKey, guard, "repair "+nonce, true)
	})
	var done []int
	for i, err := range errs {
		if err == nil {
			done = append(done, masters[i].Index)
		}
	}
	return done, errors.Join(prefixed(masters, errs)...)
}
