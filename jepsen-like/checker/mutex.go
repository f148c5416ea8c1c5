package checker

import (
	"fmt"
	"sort"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Mutex checks that no two processes held a lock key at once. Semaphore
// acquires (value "limit=N") are left to Semaphore.
type Mutex struct{}

// Name returns "mutex".
func (Mutex) Name() string { return "mutex" }

// Check finds the first pair of overlapping holds of a key by two processes.
func (m Mutex) Check(events []history.Event) Result {
	byKey := make(map[string][]Hold)
	n := 0
	for _, h := range Holds(events) {
		if h.Limit == 0 {
			byKey[h.Key] = append(byKey[h.Key], h)
			n++
		}
	}
	var found []string
	var proof []history.Event
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].Start < hs[j].Start })
		// Sweep by start; keep the hold that ends last among those started.
		var last *Hold
		for i := range hs {
			h := hs[i]
			if last != nil && last.Process != h.Process && overlap(*last, h) {
				found = append(found, fmt.Sprintf("key %q held by process %d (acquired #%d, until %.3fs) and process %d (acquired #%d at %.3fs)",
					key, last.Process, last.Proof[0].Index, sec(last.End), h.Process, h.Proof[0].Index, sec(h.Start)))
				if proof == nil {
					proof = append(append(proof, last.Proof...), h.Proof...)
				}
			}
			if last == nil || h.End > last.End {
				last = &hs[i]
			}
		}
	}
	if len(found) > 0 {
		return Result{Checker: m.Name(), Verdict: Invalid, Ops: sortEvents(proof),
			Explanation: fmt.Sprintf("%d overlapping holds; first: %s", len(found), found[0])}
	}
	return Result{Checker: m.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d holds of %d keys, none overlapping", n, len(byKey))}
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
