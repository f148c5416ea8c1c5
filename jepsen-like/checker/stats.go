package checker

import (
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Stats checks that a run produced the evidence its verdicts rest on, as
// Jepsen's stats checker does: every requested fault was injected (a
// "<fault> start" nemesis event; "<fault> skipped (no hold)" does not
// count), and, with fencing on, some lock hold carried a token. A missing
// piece makes the verdict unknown, never valid. It needs the run's
// configuration, so the suite adds it; a bare history has none.
type Stats struct {
	// Faults are the faults the run asked for (generator names).
	Faults []string
	// Fencing says the lock was run with fencing tokens.
	Fencing bool
}

// Name returns "stats".
func (Stats) Name() string { return "stats" }

// Check counts fault starts and tokens.
func (s Stats) Check(events []history.Event) Result {
	started := make(map[string]int)
	holds, tokens := 0, 0
	for _, e := range events {
		if e.F == history.Nemesis {
			if f, ok := strings.CutSuffix(e.Value, " start"); ok {
				started[f]++
			}
		}
	}
	for _, h := range Holds(events) {
		if h.Limit == 0 {
			holds++
			if h.Token != 0 {
				tokens++
			}
		}
	}
	var missing []string
	for _, f := range s.Faults {
		if started[f] == 0 {
			missing = append(missing, f+" never injected")
		}
	}
	if s.Fencing && holds > 0 && tokens == 0 {
		missing = append(missing, fmt.Sprintf("fencing on, but none of the %d lock holds carried a token", holds))
	}
	if len(missing) > 0 {
		return Result{Checker: s.Name(), Verdict: Unknown, Explanation: strings.Join(missing, "; ") + ": the other verdicts rest on no evidence"}
	}
	var parts []string
	for _, f := range s.Faults {
		parts = append(parts, fmt.Sprintf("%s ×%d", f, started[f]))
	}
	exp := fmt.Sprintf("%d lock holds, %d with a token", holds, tokens)
	if len(parts) > 0 {
		exp = "faults injected: " + strings.Join(parts, ", ") + "; " + exp
	}
	return Result{Checker: s.Name(), Verdict: Valid, Explanation: exp}
}
