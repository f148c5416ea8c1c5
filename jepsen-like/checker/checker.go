package checker

import (
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Verdict is a checker's answer.
type Verdict string

// The verdicts, from best to worst for the exit code: valid (0), invalid
// (1), unknown (2).
const (
	Valid   Verdict = "valid"
	Invalid Verdict = "invalid"
	Unknown Verdict = "unknown"
)

// Result is one checker's verdict on a history.
type Result struct {
	Checker     string  `json:"checker"`
	Verdict     Verdict `json:"verdict"`
	Explanation string  `json:"explanation"`
	// Ops are the events that prove an invalid verdict (empty otherwise).
	Ops []history.Event `json:"ops,omitempty"`
	// Overlaps are, for an invalid mutex verdict, every overlap of two
	// holds (at most MaxOverlaps); Ops proves the first.
	Overlaps []Overlap `json:"overlaps,omitempty"`
}

// String is "checker: verdict (explanation)".
func (r Result) String() string {
	return fmt.Sprintf("%s: %s (%s)", r.Checker, r.Verdict, r.Explanation)
}

// Checker checks one property of a history.
type Checker interface {
	// Name is the checker's name as the issue fixes it, e.g. "mutex".
	Name() string
	// Check returns the verdict on a validated history.
	Check(events []history.Event) Result
}

// Applier is a Checker with a domain: Applies reports whether a history has
// anything of it (a lock acquire, a register operation, a semaphore
// acquire). Run skips checkers whose domain is absent.
type Applier interface {
	Checker
	Applies(events []history.Event) bool
}

// All returns the five checkers: mutex, tokens, fenced-register, semaphore,
// set.
func All() []Checker {
	return []Checker{Mutex{}, Tokens{}, FencedRegister{}, Semaphore{}, Set{}}
}

// NothingToCheck is the name of the result Run gives when no checker's
// domain is in the history (an empty history, nemesis events only).
const NothingToCheck = "history"

// Run runs the checkers (default All) on events. A checker that is an
// Applier runs only if it applies: a lock history gets no register or
// semaphore verdict. Of the checkers that run, one with nothing to check in
// its domain (no hold, no completed operation, no token) says unknown. If
// no Applier applies at all, the results include one unknown result named
// NothingToCheck: a verdict needs evidence.
func Run(events []history.Event, checkers ...Checker) []Result {
	if len(checkers) == 0 {
		checkers = All()
	}
	out := make([]Result, 0, len(checkers))
	domain := false
	for _, c := range checkers {
		if a, ok := c.(Applier); ok {
			if !a.Applies(events) {
				continue
			}
			domain = true
		}
		out = append(out, c.Check(events))
	}
	if !domain {
		out = append([]Result{{Checker: NothingToCheck, Verdict: Unknown,
			Explanation: fmt.Sprintf("%d events, none an acquire, write or read: nothing to check", len(events))}}, out...)
	}
	return out
}

// Overall is invalid if any result is invalid, else unknown if any is
// unknown, else valid.
func Overall(results []Result) Verdict {
	v := Valid
	for _, r := range results {
		switch r.Verdict {
		case Invalid:
			return Invalid
		case Unknown:
			v = Unknown
		}
	}
	return v
}

// ExitCode maps a verdict to the command's exit code: 0 valid, 1 invalid,
// 2 unknown.
func ExitCode(v Verdict) int {
	switch v {
	case Valid:
		return 0
	case Invalid:
		return 1
	default:
		return 2
	}
}

// Summary is one line, e.g. "mutex invalid, tokens valid, ...".
func Summary(results []Result) string {
	parts := make([]string, len(results))
	for i, r := range results {
		parts[i] = r.Checker + " " + string(r.Verdict)
	}
	return strings.Join(parts, ", ")
}
