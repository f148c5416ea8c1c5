package probe

import "errors"

// The per-master states of a master that does not vote. Package redlock
// exports them (redlock.ErrYoung is ErrYoung, and so on); they live here so
// that the rule (State.Verdict) and its errors (Verdict.Err) stay together.
var (
	ErrUnreachable = errors.New("unreachable")
	ErrQuarantined = errors.New("quarantined")

	ErrYoung           error = quarantine("young")
	ErrRestarted       error = quarantine("restarted")
	ErrDataLost        error = quarantine("lost its data")
	ErrPromoted        error = quarantine("promoted replica")
	ErrRaisingCounters error = quarantine("raising counters")
	ErrNotProbed       error = quarantine("not probed yet")
	ErrStaleProbe      error = quarantine("last answered probe too old")
	ErrReplica         error = quarantine("a replica")
)

// quarantineError is a per-master sentinel that also matches ErrQuarantined.
type quarantineError struct{ name string }

func quarantine(name string) *quarantineError { return &quarantineError{name} }

func (e *quarantineError) Error() string { return e.name }

func (e *quarantineError) Is(target error) bool { return target == ErrQuarantined }

// stateError is a verdict as an error: its text is the verdict's, and it
// matches the state's sentinel.
type stateError struct {
	sentinel error
	text     string
}

func (e *stateError) Error() string { return e.text }
func (e *stateError) Unwrap() error { return e.sentinel }

// Err is the verdict as an error matching its sentinel, nil when the master
// votes.
func (v Verdict) Err() error {
	var s error
	switch v.Kind {
	case Votes:
		return nil
	case Unreachable:
		s = ErrUnreachable
	case NotProbed:
		s = ErrNotProbed
	case Replica:
		s = ErrReplica
	case DataLost:
		s = ErrDataLost
	case Promoted:
		s = ErrPromoted
	case Restarted:
		s = ErrRestarted
	case Young:
		s = ErrYoung
	case RaisingCounters:
		s = ErrRaisingCounters
	default:
		s = ErrQuarantined
	}
	return &stateError{sentinel: s, text: v.String()}
}
