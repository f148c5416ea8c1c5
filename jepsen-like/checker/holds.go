package checker

import (
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Pos is a point of a history: a time and, for an event, its index, so
// that events with equal times keep the order of their indices. A deadline
// (valid_until_ns) has index -1: it comes before every event of its time.
type Pos struct {
	TimeNS int64
	Index  int
}

// Less orders positions by time, then index.
func (p Pos) Less(q Pos) bool {
	if p.TimeNS != q.TimeNS {
		return p.TimeNS < q.TimeNS
	}
	return p.Index < q.Index
}

func at(e history.Event) Pos { return Pos{e.TimeNS, e.Index} }

func deadline(ns int64) Pos { return Pos{ns, -1} }

// Hold is a period in which a process believed it held a key: from its
// acquire's ok to the earlier of its release's invoke and valid_until_ns.
type Hold struct {
	Process int
	Key     string
	Token   uint64
	Limit   int // semaphore limit ("limit=N" on the acquire); 0 for a lock
	Start   int64
	End     int64
	// From and To are Start and End as positions (ties broken by index).
	From, To Pos
	// Invoke is the acquire's invoke (its TimeNS and TTLNS).
	Invoke history.Event
	// Proof are the acquire's ok and, if there was one, the release's invoke.
	Proof []history.Event
}

// Holds extracts the holds of a validated history, in the order of their
// acquires. Holds whose validity had run out before the ok was recorded are
// left out.
func Holds(events []history.Event) []Hold {
	var holds []Hold
	current := make(map[int]int) // process → index in holds of its open hold
	clientEvents(events, func(inv, e history.Event) {
		switch {
		case e.F == history.Acquire && e.Type == history.OK:
			limit, _ := inv.Limit()
			h := Hold{Process: e.Process, Key: e.Key, Token: e.Token, Start: e.TimeNS, End: e.ValidUntilNS,
				From: at(e), To: deadline(e.ValidUntilNS), Limit: limit, Invoke: inv, Proof: []history.Event{e}}
			if !h.From.Less(h.To) {
				delete(current, e.Process)
				return
			}
			current[e.Process] = len(holds)
			holds = append(holds, h)
		case e.F == history.Release && e.Type == history.Invoke:
			i, ok := current[e.Process]
			if !ok || holds[i].Key != e.Key {
				return
			}
			delete(current, e.Process)
			if p := at(e); p.Less(holds[i].To) {
				holds[i].End, holds[i].To = e.TimeNS, p
				holds[i].Proof = append(holds[i].Proof, e)
			}
		}
	})
	return holds
}

// overlap says whether two holds overlap; holds are half-open intervals
// [From, To).
func overlap(a, b Hold) bool { return a.From.Less(b.To) && b.From.Less(a.To) }
