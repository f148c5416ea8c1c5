package checker

import (
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Set checks the set workload as Jepsen's set checker does: every add
// acknowledged (ok) must be in the final read (the last ok read-set of its
// key), and the final read holds nothing that no add tried. An add that
// failed or whose outcome is unknown (info, or never completed) may or may
// not be there. Without a final read or without an acknowledged add the
// verdict is unknown. An acknowledged add missing from the final read is
// lost data: two holders read-modify-wrote the set at once.
type Set struct{}

// Name returns "set".
func (Set) Name() string { return "set" }

// Applies reports whether the history has an add.
func (Set) Applies(events []history.Event) bool {
	for _, e := range events {
		if e.F == history.Add {
			return true
		}
	}
	return false
}

// Check compares the acknowledged adds with the final read.
func (s Set) Check(events []history.Event) Result {
	type add struct{ invoke, ok history.Event }
	final := make(map[string]history.Event) // key → last ok read-set
	tried := make(map[string]map[string]bool)
	var acked []add
	open := make(map[int]history.Event)
	for _, e := range events {
		switch {
		case e.F == history.ReadSet && e.Type == history.OK:
			final[e.Key] = e
		case e.F != history.Add:
		case e.Type == history.Invoke:
			open[e.Process] = e
			if tried[e.Key] == nil {
				tried[e.Key] = make(map[string]bool)
			}
			tried[e.Key][e.Value] = true
		case e.Type == history.OK:
			acked = append(acked, add{open[e.Process], e})
		}
	}
	if len(acked) == 0 {
		return Result{Checker: s.Name(), Verdict: Unknown, Explanation: "no add was acknowledged: nothing to check"}
	}
	var found []string
	var proof []history.Event
	for _, a := range acked {
		r, ok := final[a.ok.Key]
		if !ok {
			return Result{Checker: s.Name(), Verdict: Unknown, Explanation: fmt.Sprintf("set %q has acknowledged adds and no final read", a.ok.Key)}
		}
		if !members(r.Value)[a.ok.Value] {
			found = append(found, fmt.Sprintf("set %q: %q, added by process %d (#%d–#%d), is not in the final read #%d",
				a.ok.Key, a.ok.Value, a.ok.Process, a.invoke.Index, a.ok.Index, r.Index))
			if proof == nil {
				proof = []history.Event{a.invoke, a.ok, r}
			}
		}
	}
	for _, key := range sortedKeys(final) {
		r := final[key]
		for _, m := range strings.Fields(r.Value) {
			if !tried[key][m] {
				found = append(found, fmt.Sprintf("set %q: the final read #%d holds %q, which no add tried", key, r.Index, m))
				if proof == nil {
					proof = []history.Event{r}
				}
			}
		}
	}
	if len(found) > 0 {
		return Result{Checker: s.Name(), Verdict: Invalid, Ops: sortEvents(proof),
			Explanation: fmt.Sprintf("%d findings; first: %s", len(found), found[0])}
	}
	return Result{Checker: s.Name(), Verdict: Valid, Explanation: fmt.Sprintf("%d acknowledged adds, every one in the final read", len(acked))}
}

func members(v string) map[string]bool {
	m := make(map[string]bool)
	for _, f := range strings.Fields(v) {
		m[f] = true
	}
	return m
}
