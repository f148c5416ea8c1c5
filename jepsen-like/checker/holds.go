package checker

import (
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Hold is a period in which a process believed it held a key: from its
// acquire's ok to the earlier of its release's invoke and valid_until_ns.
type Hold struct {
	Process int
	Key     string
	Token   uint64
	Limit   int // semaphore limit ("limit=N" on the acquire); 0 for a lock
	Start   int64
	End     int64
	// Proof are the acquire's ok and, if there was one, the release's invoke.
	Proof []history.Event
}

// Holds extracts the holds of a history, in the order of their acquires.
// Holds whose validity had run out before the ok was recorded are left out.
func Holds(events []history.Event) []Hold {
	var holds []Hold
	current := make(map[int]int) // process → index in holds of its open hold
	invokes := make(map[int]history.Event)
	for _, e := range events {
		if e.Process == history.NemesisProcess {
			continue
		}
		if e.Type == history.Invoke {
			invokes[e.Process] = e
		}
		switch {
		case e.F == history.Acquire && e.Type == history.OK:
			h := Hold{Process: e.Process, Key: e.Key, Token: e.Token, Start: e.TimeNS, End: e.ValidUntilNS,
				Limit: limitOf(invokes[e.Process].Value, e.Value), Proof: []history.Event{e}}
			if h.End <= h.Start {
				delete(current, e.Process)
				continue
			}
			current[e.Process] = len(holds)
			holds = append(holds, h)
		case e.F == history.Release && e.Type == history.Invoke:
			i, ok := current[e.Process]
			if !ok || holds[i].Key != e.Key {
				continue
			}
			delete(current, e.Process)
			if e.TimeNS < holds[i].End {
				holds[i].End = e.TimeNS
				holds[i].Proof = append(holds[i].Proof, e)
			}
		}
	}
	return holds
}

// limitOf reads "limit=N" from an acquire's invoke or ok value.
func limitOf(values ...string) int {
	for _, v := range values {
		if s, ok := strings.CutPrefix(v, "limit="); ok {
			if n, err := strconv.Atoi(s); err == nil && n > 0 {
				return n
			}
		}
	}
	return 0
}

func overlap(a, b Hold) bool { return a.Start < b.End && b.Start < a.End }
