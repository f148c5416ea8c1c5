package checker

import (
	"fmt"
	"slices"
	"sort"
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Semaphore checks that a semaphore never had more than limit holders at
// once. A semaphore acquire carries value "limit=N" on its invoke (and ok).
// Every acquire of a semaphore must name the same limit, and a key is
// either a lock or a semaphore: mixed limits, or lock holds of a semaphore's
// key, are findings. Lock holds of a semaphore's key count as holders.
type Semaphore struct{}

// Name returns "semaphore".
func (Semaphore) Name() string { return "semaphore" }

// Applies reports whether the history has a semaphore acquire.
func (Semaphore) Applies(events []history.Event) bool {
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.Invoke {
			if n, _ := e.Limit(); n > 0 {
				return true
			}
		}
	}
	return false
}

// Check sweeps each semaphore's hold starts and ends in history order. With
// no semaphore hold at all the verdict is unknown.
func (s Semaphore) Check(events []history.Event) Result {
	byKey := make(map[string][]Hold)
	sems := make(map[string]bool)
	n := 0
	for _, h := range Holds(events) {
		byKey[h.Key] = append(byKey[h.Key], h)
		if h.Limit > 0 {
			sems[h.Key] = true
			n++
		}
	}
	if n == 0 {
		return Result{Checker: s.Name(), Verdict: Unknown, Explanation: "no semaphore permit was ever held: nothing to check"}
	}
	type edge struct {
		at    Pos
		delta int
		hold  int
	}
	for _, key := range sortedKeys(sems) {
		hs := byKey[key]
		if res, bad := s.mixed(key, hs); bad {
			return res
		}
		limit := hs[slices.IndexFunc(hs, func(h Hold) bool { return h.Limit > 0 })].Limit
		var edges []edge
		for i, h := range hs {
			edges = append(edges, edge{h.From, +1, i}, edge{h.To, -1, i})
		}
		// At equal positions an end comes first: holds are half-open.
		sort.SliceStable(edges, func(i, j int) bool {
			if edges[i].at != edges[j].at {
				return edges[i].at.Less(edges[j].at)
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
			if len(holding) > limit {
				var proof []history.Event
				for i := range holding {
					proof = append(proof, hs[i].Proof...)
				}
				return Result{Checker: s.Name(), Verdict: Invalid, Ops: sortEvents(proof),
					Explanation: fmt.Sprintf("semaphore %q had %d holders at %.3fs, limit %d", key, len(holding), sec(e.at.TimeNS), limit)}
			}
		}
	}
	return Result{Checker: s.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d holds of %d semaphores, never above the limit", n, len(sems))}
}

// mixed reports a semaphore key acquired with different limits, or also
// held as a lock.
func (s Semaphore) mixed(key string, hs []Hold) (Result, bool) {
	first := make(map[int]Hold) // limit → first hold with it
	var limits []int
	for _, h := range hs {
		if _, ok := first[h.Limit]; !ok {
			first[h.Limit] = h
			limits = append(limits, h.Limit)
		}
	}
	if len(limits) == 1 {
		return Result{}, false
	}
	var names []string
	var proof []history.Event
	for _, l := range limits {
		if l == 0 {
			names = append(names, "a lock")
		} else {
			names = append(names, "limit "+strconv.Itoa(l))
		}
		proof = append(proof, first[l].Proof[0])
	}
	return Result{Checker: s.Name(), Verdict: Invalid, Ops: sortEvents(proof),
		Explanation: fmt.Sprintf("semaphore %q was held with %s: one key, one limit", key, strings.Join(names, ", "))}, true
}
