package checker

import (
	"sort"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// MaxOverlaps is how many overlaps Mutex lists in Result.Overlaps at most.
const MaxOverlaps = 100

// Overlap is a time two processes held one key at once, at least one of
// them with a lock hold: a finding of Mutex.
type Overlap struct {
	Key string `json:"key"`
	// Processes are the two holders, the earlier acquirer first.
	Processes [2]int `json:"processes"`
	// FromNS and ToNS bound the time both held the key.
	FromNS int64 `json:"from_ns"`
	ToNS   int64 `json:"to_ns"`
	// Ops are both holds' events (each acquire's ok and, if any, its
	// release's invoke), in index order.
	Ops []history.Event `json:"ops"`
}

// Overlaps lists every pair of holds of a key by two processes that
// overlap, one of them a lock hold (permits among themselves are left to
// Semaphore), by the later hold's start, at most limit of them (limit ≤ 0:
// no bound). Unlike Mutex's sweep, which needs one finding per hold, it
// lists every pair: three holders at once are three overlaps.
func Overlaps(holds []Hold, limit int) []Overlap {
	byKey := make(map[string][]Hold)
	for _, h := range holds {
		byKey[h.Key] = append(byKey[h.Key], h)
	}
	var out []Overlap
	for _, key := range sortedKeys(byKey) {
		hs := byKey[key]
		sort.SliceStable(hs, func(i, j int) bool { return hs[i].From.Less(hs[j].From) })
		var active []Hold // started before b, not ended before it starts
		for _, b := range hs {
			kept := active[:0]
			for _, a := range active {
				if !b.From.Less(a.To) {
					continue // a ended before b, and before every later hold
				}
				kept = append(kept, a)
				if a.Process == b.Process || (a.Limit != 0 && b.Limit != 0) {
					continue
				}
				if limit > 0 && len(out) == limit {
					return out
				}
				ops := append(append([]history.Event(nil), a.Proof...), b.Proof...)
				out = append(out, Overlap{Key: key, Processes: [2]int{a.Process, b.Process},
					FromNS: b.Start, ToNS: min(a.End, b.End), Ops: sortEvents(ops)})
			}
			active = append(kept, b)
		}
	}
	return out
}
