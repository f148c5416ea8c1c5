package checker

import (
	"fmt"
	"sort"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Tokens checks that of two holds of a key that did not overlap, the later
// one carries a strictly greater token, and that no token is handed out
// twice within a key or, where the history records the keys' fence buckets
// (an acquire ok's bucket), within a bucket across its keys. Holds without a
// token, and semaphore holds (whose tokens grow per slot, not per
// semaphore), are skipped.
type Tokens struct{}

// Name returns "tokens".
func (Tokens) Name() string { return "tokens" }

// Applies reports whether the history has a lock acquire.
func (Tokens) Applies(events []history.Event) bool { return hasLockAcquire(events) }

// Check compares each hold with the greatest token of the holds that ended
// before it started. With no lock hold carrying a token the verdict is
// unknown.
func (t Tokens) Check(events []history.Event) Result {
	byKey := make(map[string][]Hold)
	n := 0
	for _, h := range Holds(events) {
		if h.Token != 0 && h.Limit == 0 {
			byKey[h.Key] = append(byKey[h.Key], h)
			n++
		}
	}
	if n == 0 {
		return Result{Checker: t.Name(), Verdict: Unknown, Explanation: "no lock hold carried a token: nothing to check"}
	}
	var found []string
	var proof []history.Event
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		byStart := append([]Hold(nil), hs...)
		sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].From.Less(byStart[j].From) })
		byEnd := append([]Hold(nil), hs...)
		sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].To.Less(byEnd[j].To) })
		var best *Hold // the ended hold with the greatest token
		j := 0
		for _, h := range byStart {
			for ; j < len(byEnd) && !h.From.Less(byEnd[j].To); j++ {
				if best == nil || byEnd[j].Token > best.Token {
					best = &byEnd[j]
				}
			}
			if best != nil && h.Token <= best.Token {
				found = append(found, fmt.Sprintf("key %q: process %d got token %d (#%d) after process %d's hold with token %d ended",
					key, h.Process, h.Token, h.Proof[0].Index, best.Process, best.Token))
				if proof == nil {
					proof = append(append(proof, best.Proof...), h.Proof...)
				}
			}
		}
	}
	if len(found) > 0 {
		return Result{Checker: t.Name(), Verdict: Invalid, Ops: sortEvents(proof),
			Explanation: fmt.Sprintf("%d holds without a greater token; first: %s", len(found), found[0])}
	}
	repeats, proof, buckets := repeatedTokens(events)
	if len(repeats) > 0 {
		return Result{Checker: t.Name(), Verdict: Invalid, Ops: proof,
			Explanation: fmt.Sprintf("%d tokens handed out twice; first: %s", len(repeats), repeats[0])}
	}
	return Result{Checker: t.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d holds with tokens, each above every earlier finished hold's, no token twice in a key or in any of %d fence buckets", n, buckets)}
}
