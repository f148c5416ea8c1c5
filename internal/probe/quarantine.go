package probe

import (
	"fmt"
	"time"
)

// Quarantine applies the restart rule to a probe of a master.
//
// A master that lost its data forgets the lock keys of live leases, so a new
// majority could form without them (the Redlock page's counterexample). It
// must not vote until every lease that existed when it restarted has ended:
// until it has been up for longestTTL. A master with appendonly yes and
// appendfsync always loses nothing acknowledged and may vote at once.
//
// prevRunID and prevEpoch are what the caller saw before ("" at first
// contact). It returns how much longer the master must wait (0: it may vote)
// and why.
func Quarantine(info Info, prevRunID, prevEpoch string, longestTTL time.Duration) (wait time.Duration, reason string) {
	if prevEpoch != "" && info.Epoch != prevEpoch {
		return longestTTL, fmt.Sprintf("lost its data (epoch marker changed); waits the longest TTL %v", longestTTL)
	}
	if info.Durable() || info.Uptime >= longestTTL {
		return 0, ""
	}
	what := "up"
	if prevRunID != "" && prevRunID != info.RunID {
		what = "restarted (run_id changed), up"
	}
	// Uptime is whole seconds, so the true uptime may be a second longer: waiting
	// longestTTL − uptime is on the safe side.
	return longestTTL - info.Uptime, fmt.Sprintf("%s %v, less than the longest TTL %v, without appendfsync always", what, info.Uptime, longestTTL)
}
