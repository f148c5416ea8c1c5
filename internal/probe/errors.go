package probe

import "errors"

// The per-master states of a master that does not count by itself. Package
// redlock exports them (redlock.ErrDataLost is ErrDataLost, and so on); they
// live here so that the verdict (Verdict) and its errors (Verdict.Err) stay
// together.
var (
	ErrUnreachable = errors.New("unreachable")
	ErrQuarantined = errors.New("quarantined")

	ErrNotProbed       error = quarantine("not probed yet")
	ErrReplica         error = quarantine("a replica")
	ErrDuplicate       error = quarantine("the same server as another master")
	ErrNotCertified    error = quarantine("not certified yet")
	ErrDataLost        error = quarantine("lost its data")
	ErrRestarted       error = quarantine("restarted")
	ErrPromoted        error = quarantine("replication id changed")
	ErrRaisingCounters error = quarantine("raising counters")
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

var sentinels = map[Kind]error{
	Unreachable:     ErrUnreachable,
	NotProbed:       ErrNotProbed,
	Replica:         ErrReplica,
	Duplicate:       ErrDuplicate,
	NotCertified:    ErrNotCertified,
	DataLost:        ErrDataLost,
	Restarted:       ErrRestarted,
	Promoted:        ErrPromoted,
	RaisingCounters: ErrRaisingCounters,
}

// Err is the verdict as an error matching its sentinel, nil when the master
// counts.
func (v Verdict) Err() error {
	if v.Kind == Votes {
		return nil
	}
	s, ok := sentinels[v.Kind]
	if !ok {
		s = ErrQuarantined
	}
	return &stateError{sentinel: s, text: v.String()}
}
