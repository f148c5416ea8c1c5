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

// All returns the four checkers: mutex, tokens, fenced-register, semaphore.
func All() []Checker {
	return []Checker{Mutex{}, Tokens{}, FencedRegister{}, Semaphore{}}
}

// Run runs every checker on events.
func Run(events []history.Event, checkers ...Checker) []Result {
	if len(checkers) == 0 {
		checkers = All()
	}
	out := make([]Result, 0, len(checkers))
	for _, c := range checkers {
		out = append(out, c.Check(events))
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
