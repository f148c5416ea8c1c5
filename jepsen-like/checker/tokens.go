package checker

import (
	"fmt"
	"sort"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Tokens checks that of two holds of a key that did not overlap, the later
// one carries a strictly greater token. Holds without a token, and semaphore
// holds (whose tokens grow per slot, not per semaphore), are skipped.
type Tokens struct{}

// Name returns "tokens".
func (Tokens) Name() string { return "tokens" }

// Check compares each hold with the greatest token of the holds that ended
// before it started.
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
		return Result{Checker: t.Name(), Verdict: Valid, Explanation: "no hold carried a token"}
	}
	var found []string
	var proof []history.Event
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		byStart := append([]Hold(nil), hs...)
		sort.SliceStable(byStart, func(i, j int) bool { return byStart[i].Start < byStart[j].Start })
		byEnd := append([]Hold(nil), hs...)
		sort.SliceStable(byEnd, func(i, j int) bool { return byEnd[i].End < byEnd[j].End })
		var best *Hold // the ended hold with the greatest token
		j := 0
		for _, h := range byStart {
			for ; j < len(byEnd) && byEnd[j].End <= h.Start; j++ {
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
	return Result{Checker: t.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d holds with tokens, each above every earlier finished hold's", n)}
}
