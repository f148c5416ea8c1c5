package redlock

import (
	"errors"

	"github.com/quorumlock/quorumlock/internal/refusal"
)

// refusedForGood reports whether one master's part of a failed operation is
// a refusal that waiting does not change: an error reply that
// refusal.ForGood names (NOPERM, NOAUTH, WRONGPASS, WRONGTYPE, an unknown
// command, a script's ACL denial), or the same server given twice
// (ErrDuplicate).
func refusedForGood(err error) bool {
	if errors.Is(err, ErrDuplicate) {
		return true
	}
	return errors.Is(err, ErrReplyError) && refusal.ForGood(err)
}

// misconfigured reports whether so many masters refused for good that no
// majority is possible until an operator acts: Lock then stops waiting, and
// the error matches ErrMisconfigured.
func (e *Error) misconfigured() bool {
	if e.Of == 0 || e.Quorum == 0 {
		return false
	}
	refused := 0
	for _, err := range e.Masters {
		var me *MasterError
		if errors.As(err, &me) && refusedForGood(me) {
			refused++
		}
	}
	return e.Of-refused < e.Quorum
}
