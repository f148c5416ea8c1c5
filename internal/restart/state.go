package restart

import (
	"context"
	_ "embed"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

var (
	//go:embed scripts/lineage.lua
	lineageSrc string
	//go:embed scripts/inspect.lua
	inspectSrc string
	//go:embed scripts/guard.lua
	guardSrc string
	//go:embed scripts/certify.lua
	certifySrc string
	//go:embed scripts/raise.lua
	raiseSrc string

	// The scripts that read the lineage start with lineage.lua's function.
	inspectScript = redis.NewScript(lineageSrc + inspectSrc)
	guardScript   = redis.NewScript(lineageSrc + guardSrc)
	certifyScript = redis.NewScript(lineageSrc + certifySrc)
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
// counters (0: none). A master without an incarnation is given one.
func Inspect(ctx context.Context, rdb redis.UniversalClient, buckets int) (State, error) {
	res, err := inspectScript.Run(ctx, rdb,
		[]string{keys.Incarnation, keys.Cert, keys.Scratch, keys.OldEpoch, keys.OldSynced, keys.Floor, keys.Lambda, keys.FenceBuckets},
		buckets, keys.BucketPrefix, newNonce()).Slice()
	if err != nil {
		return State{}, err
	}
	if len(res) != 11 {
		return State{}, fmt.Errorf("inspect script returned %d values, want 11", len(res))
	}
	str := func(i int) string { s, _ := res[i].(string); return s }
	l, ok := parseLineage(str(0))
	st := State{
		Lineage: l, Role: str(1),
		Cert: str(2), Scratch: str(3), OldEpoch: str(4), OldSynced: str(5), FenceBuckets: str(7),
		Counters: Counters{Buckets: map[int]fencing.Token{}, Lambda: map[int64]int64{}},
	}
	if !ok || st.Role == "" {
		return State{}, fmt.Errorf("the inspect script read no lineage or role (%q)", str(0))
	}
	ms, err := strconv.ParseInt(str(8), 10, 64)
	if err != nil {
		return State{}, fmt.Errorf("server time %q: %w", str(8), err)
	}
	st.Now = time.UnixMilli(ms)
	if f := str(6); f != "" {
		if st.Counters.Floor, err = fencing.ParseToken(f); err != nil {
			return State{}, fmt.Errorf("%s: %w", keys.Floor, err)
		}
	}
	lambda, _ := res[9].([]any)
	for i := 0; i+1 < len(lambda); i += 2 {
		ttl, err1 := strconv.ParseInt(fmt.Sprint(lambda[i]), 10, 64)
		exp, err2 := strconv.ParseFloat(fmt.Sprint(lambda[i+1]), 64)
		if err1 != nil || err2 != nil {
			return State{}, fmt.Errorf("%s holds %v → %v, not a TTL and an expiry", keys.Lambda, lambda[i], lambda[i+1])
		}
		st.Counters.Lambda[ttl] = int64(exp)
	}
	bk, _ := res[10].([]any)
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

// parseLineage reads "run_id replid incarnation"; a replica has no
// incarnation of its own, so only the first two must be there.
func parseLineage(s string) (probe.Lineage, bool) {
	f := strings.Split(s, " ")
	if len(f) != 3 || f[0] == "" || f[1] == "" {
		return probe.Lineage{}, false
	}
	return probe.Lineage{RunID: f[0], ReplID: f[1], Incarnation: f[2]}, true
}
