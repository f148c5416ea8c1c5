package restart

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

var (
	//go:embed scripts/inspect.lua
	inspectSrc string
	//go:embed scripts/certify.lua
	certifySrc string
	//go:embed scripts/raise.lua
	raiseSrc string

	inspectScript = redis.NewScript(inspectSrc)
	certifyScript = redis.NewScript(certifySrc)
	raiseScript   = redis.NewScript(raiseSrc)
)

// State is a master's restart state, read in one atomic step.
type State struct {
	Lineage probe.Lineage
	Role    string
	// The master's records (internal/keys), "" when absent.
	Cert, Scratch, OldEpoch, OldSynced string
	FenceBuckets                       string
	Now                                time.Time // the master's clock
	Counters                           Counters  // buckets, floor, lambda
}

// Certified is rule V on this state.
func (s State) Certified() bool { return probe.Counts(s.Cert, s.Lineage, s.Role) }

// RecordFree reports that the master carries no quorumlock record at all.
func (s State) RecordFree() bool {
	return s.Cert == "" && s.Scratch == "" && s.OldEpoch == "" && s.OldSynced == ""
}

// Inspect reads a master's state atomically, with its first buckets bucket
// counters (0: none).
func Inspect(ctx context.Context, rdb redis.UniversalClient, buckets int) (State, error) {
	res, err := inspectScript.Run(ctx, rdb,
		[]string{keys.Cert, keys.Scratch, keys.OldEpoch, keys.OldSynced, keys.Floor, keys.Lambda, keys.FenceBuckets},
		buckets, keys.BucketPrefix).Slice()
	if err != nil {
		return State{}, err
	}
	if len(res) != 12 {
		return State{}, fmt.Errorf("inspect script returned %d values, want 12", len(res))
	}
	str := func(i int) string { s, _ := res[i].(string); return s }
	st := State{
		Lineage: probe.Lineage{RunID: str(0), ReplID: str(1)}, Role: str(2),
		Cert: str(3), Scratch: str(4), OldEpoch: str(5), OldSynced: str(6), FenceBuckets: str(8),
		Counters: Counters{Buckets: map[int]fencing.Token{}, Lambda: map[int64]int64{}},
	}
	if !st.Lineage.Known() || st.Role == "" {
		return State{}, fmt.Errorf("INFO in a script has no run_id, master_replid or role")
	}
	ms, err := strconv.ParseInt(str(9), 10, 64)
	if err != nil {
		return State{}, fmt.Errorf("server time %q: %w", str(9), err)
	}
	st.Now = time.UnixMilli(ms)
	if f := str(7); f != "" {
		if st.Counters.Floor, err = fencing.ParseToken(f); err != nil {
			return State{}, fmt.Errorf("%s: %w", keys.Floor, err)
		}
	}
	lambda, _ := res[10].([]any)
	for i := 0; i+1 < len(lambda); i += 2 {
		ttl, err1 := strconv.ParseInt(fmt.Sprint(lambda[i]), 10, 64)
		exp, err2 := strconv.ParseFloat(fmt.Sprint(lambda[i+1]), 64)
		if err1 != nil || err2 != nil {
			return State{}, fmt.Errorf("%s holds %v → %v, not a TTL and an expiry", keys.Lambda, lambda[i], lambda[i+1])
		}
		st.Counters.Lambda[ttl] = int64(exp)
	}
	bk, _ := res[11].([]any)
	for i := 0; i+1 < len(bk); i += 2 {
		n, err1 := strconv.Atoi(fmt.Sprint(bk[i]))
		v, err2 := fencing.ParseToken(fmt.Sprint(bk[i+1]))
		if err1 != nil || err2 != nil {
			return State{}, fmt.Errorf("bucket counter %v holds %q, not a token", bk[i], bk[i+1])
		}
		st.Counters.Buckets[n] = v
	}
	return st, nil
}

// LiveLambda is the longest TTL in the state's lambda set whose last lease
// has not ended on the master's clock.
func (s State) LiveLambda() time.Duration {
	var longest time.Duration
	for ttl, exp := range s.Counters.Lambda {
		if exp > s.Now.UnixMilli() {
			longest = max(longest, time.Duration(ttl)*time.Millisecond)
		}
	}
	return longest
}
