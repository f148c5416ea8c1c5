package generator

import (
	"slices"
	"time"
)

// LongLeaseTTLs is how many workload TTLs the restart-long nemesis's long
// lease lasts: long enough that a master restarted just after the lease's
// lambda entry ended is, under a quarantine of one workload TTL, certified
// again (a probe pass, a TTL, a sync) and used by a challenger (whose first
// Lock, begun at the restart, waits out its two-TTL deadline first) well
// before the lease ends.
const LongLeaseTTLs = 5

// restartLongStep fills in a restart-long step (see the nemesis's
// restartLong): the holder is confined to a seeded bare majority
// (Majority, as an episode's), Masters[0] of it is the one restarted,
// Slots[0] the candidate holder, Delay the long lease's TTL, Hold the
// longest wait for each of its phases. It returns the step's typical
// length: the settle, the lambda entry's two long TTLs, the lease's own.
func restartLongStep(st *Step, perm []int, quorum, candidate int, ttl time.Duration) time.Duration {
	st.Majority = slices.Sorted(slices.Values(perm[:quorum]))
	st.Masters = []int{perm[0]}
	st.Slots = []int{candidate}
	st.Delay = LongLeaseTTLs * ttl
	st.Hold = 5 * ttl
	st.Settle = ttl + ttl/10
	return st.Settle + 3*st.Delay + ttl
}
