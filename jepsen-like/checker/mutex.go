package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// DefaultDriftFactor is the share of the TTL that Mutex expects a lease's
// validity to give up to clock drift, as Redlock prescribes (with a fixed
// 2 ms on top): redlock.DefaultDriftFactor.
const DefaultDriftFactor = 0.01

// driftFloor is the fixed part of Redlock's drift allowance.
const driftFloor = 2 * time.Millisecond

// Mutex checks that no two processes held a lock key at once, and that no
// lease claimed more validity than its TTL allows.
//
// A lock hold (an acquire without "limit=N") may overlap no hold of the
// same key by another process, lock or semaphore permit; holds of
// semaphores among themselves are left to Semaphore.
//
// When an acquire's invoke records ttl_ns, its ok's valid_until_ns must not
// be past ok + TTL − drift allowance (TTL·DriftFactor + 2 ms): the winning
// round began before the ok was recorded, and a lease may claim at most TTL
// − allowance from the start of its round. A later deadline is validity the
// lock computed wrongly (no drift allowance, too long a TTL), whatever the
// lock says about itself. The bound is not taken from the invoke: Lock
// waits and retries between its invoke and the round that wins, so a
// correct lease may end well after invoke + TTL − allowance. When the ok
// records sent_ns (the winning attempt's first send, seen by the suite's
// go-redis hook), valid_until_ns must not be past sent_ns + TTL − allowance
// either: that bound does not depend on retries, and catches validity
// counted from the end of the round.
type Mutex struct {
	// DriftFactor is the share of the TTL a lease must give up to clock
	// drift. Default (0) DefaultDriftFactor; the suite runs redlock with its
	// default, the same 0.01.
	DriftFactor float64
}

// Name returns "mutex".
func (Mutex) Name() string { return "mutex" }

// Applies reports whether the history has a lock acquire (one without
// "limit=N").
func (Mutex) Applies(events []history.Event) bool { return hasLockAcquire(events) }

func hasLockAcquire(events []history.Event) bool {
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.Invoke {
			if n, _ := e.Limit(); n == 0 {
				return true
			}
		}
	}
	return false
}

// Allowance is the drift allowance Mutex expects for ttl.
func (m Mutex) Allowance(ttl time.Duration) time.Duration {
	f := m.DriftFactor
	if f <= 0 {
		f = DefaultDriftFactor
	}
	return time.Duration(float64(ttl)*f) + driftFloor
}

// Check finds the leases that claimed too much validity, the acquisitions
// returned with no validity left (returnedExpired), and the overlapping
// holds of a key by two processes of which one is a lock hold.
// With no lock hold at all the verdict is unknown.
func (m Mutex) Check(events []history.Event) Result {
	byKey := make(map[string][]Hold)
	n := 0
	var found []string
	var proof []history.Event
	for _, h := range Holds(events) {
		byKey[h.Key] = append(byKey[h.Key], h)
		if h.Limit != 0 {
			continue
		}
		n++
		if ttl := h.Invoke.TTLNS; ttl > 0 {
			ok := h.Proof[0]
			bound := ok.TimeNS + ttl - int64(m.Allowance(time.Duration(ttl)))
			if ok.ValidUntilNS > bound {
				found = append(found, fmt.Sprintf("key %q: process %d's lease (#%d, TTL %v asked at #%d) is valid until %.6fs, past its ok (%.6fs) + TTL − drift allowance %v = %.6fs",
					h.Key, h.Process, ok.Index, time.Duration(ttl), h.Invoke.Index, sec(ok.ValidUntilNS), sec(ok.TimeNS), m.Allowance(time.Duration(ttl)), sec(bound)))
				if proof == nil {
					proof = []history.Event{h.Invoke, h.Proof[0]}
				}
			}
		}
		if f := m.sentBound(h); f != "" {
			found = append(found, f)
			if proof == nil {
				proof = sentBoundProof(h)
			}
		}
	}
	expired, expiredProof := expiredOKs(events)
	found = append(found, expired...)
	if proof == nil {
		proof = expiredProof
	}
	if n == 0 && len(expired) == 0 {
		return Result{Checker: m.Name(), Verdict: Unknown, Explanation: "no lock was ever held: nothing to check"}
	}
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].From.Less(hs[j].From) })
		// Sweep by start; keep, of the holds started, the lock hold and the
		// hold of any kind that end last.
		var lastLock, lastAny *Hold
		for i := range hs {
			h := hs[i]
			other := lastLock
			if h.Limit == 0 {
				other = lastAny
			}
			if other != nil && other.Process != h.Process && overlap(*other, h) {
				found = append(found, fmt.Sprintf("key %q held by process %d (acquired #%d, until %.3fs) and process %d (acquired #%d at %.3fs)",
					key, other.Process, other.Proof[0].Index, sec(other.End), h.Process, h.Proof[0].Index, sec(h.Start)))
				if proof == nil {
					proof = append(append(proof, other.Proof...), h.Proof...)
				}
			}
			if lastAny == nil || lastAny.To.Less(h.To) {
				lastAny = &hs[i]
			}
			if h.Limit == 0 && (lastLock == nil || lastLock.To.Less(h.To)) {
				lastLock = &hs[i]
			}
		}
	}
	if len(found) > 0 {
		return Result{Checker: m.Name(), Verdict: Invalid, Ops: sortEvents(proof), Overlaps: Overlaps(Holds(events), MaxOverlaps),
			Explanation: fmt.Sprintf("%d findings; first: %s", len(found), found[0])}
	}
	return Result{Checker: m.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d lock holds of %d keys, none overlapping, none valid past ok + TTL − drift", n, len(byKey))}
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }

func sortedKeys[V any](m map[string]V) []string {
	keys := make([]string, 0, len(m))
	for k := range m {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	return keys
}

func sortEvents(es []history.Event) []history.Event {
	sort.SliceStable(es, func(i, j int) bool { return es[i].Index < es[j].Index })
	return es
}
