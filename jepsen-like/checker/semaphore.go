package checker

import (
	"fmt"
	"sort"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Semaphore checks that a semaphore never had more than limit holders at
// once. A semaphore acquire carries value "limit=N" on its invoke or ok.
type Semaphore struct{}

// Name returns "semaphore".
func (Semaphore) Name() string { return "semaphore" }

// Check sweeps each semaphore's hold starts and ends in time order.
func (s Semaphore) Check(events []history.Event) Result {
	byKey := make(map[string][]Hold)
	n := 0
	for _, h := range Holds(events) {
		if h.Limit > 0 {
			byKey[h.Key] = append(byKey[h.Key], h)
			n++
		}
	}
	if n == 0 {
		return Result{Checker: s.Name(), Verdict: Valid, Explanation: "no semaphore acquire (value limit=N) in the history"}
	}
	type edge struct {
		at    int64
		delta int
		hold  int
	}
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		var edges []edge
		for i, h := range hs {
			edges = append(edges, edge{h.Start, +1, i}, edge{h.End, -1, i})
		}
		// At equal times an end comes first: holds are half-open intervals.
		sort.SliceStable(edges, func(i, j int) bool {
			if edges[i].at != edges[j].at {
				return edges[i].at < edges[j].at
			}
			return edges[i].delta < edges[j].delta
		})
		holding := make(map[int]bool)
		for _, e := range edges {
			if e.delta < 0 {
				delete(holding, e.hold)
				continue
			}
			holding[e.hold] = true
			if limit := hs[e.hold].Limit; len(holding) > limit {
				var proof []history.Event
				for i := range holding {
					proof = append(proof, hs[i].Proof...)
				}
				return Result{Checker: s.Name(), Verdict: Invalid, Ops: sortEvents(proof),
					Explanation: fmt.Sprintf("semaphore %q had %d holders at %.3fs, limit %d", key, len(holding), sec(e.at), limit)}
			}
		}
	}
	return Result{Checker: s.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d holds of %d semaphores, never above the limit", n, len(byKey))}
}
