package redlock

import (
	"errors"
)

// masterErrs keeps one error per master for an operation's Error: the most
// telling one when several steps had something to say about the same master
// (its answer says more than its silence, which says more than why it did
// not count by itself). Errors that name no master are kept after them.
type masterErrs struct {
	by    []*MasterError
	other []error
}

func newMasterErrs(n int) masterErrs { return masterErrs{by: make([]*MasterError, n)} }

// add records errs, keeping per master the higher ranked.
func (e *masterErrs) add(errs ...error) {
	for _, err := range errs {
		if err == nil {
			continue
		}
		var me *MasterError
		if !errors.As(err, &me) || me.Master < 0 || me.Master >= len(e.by) {
			e.other = append(e.other, err)
			continue
		}
		if prev := e.by[me.Master]; prev == nil || rank(me) > rank(prev) {
			e.by[me.Master] = me
		}
	}
}

// list is one error per master, in master order, then the others.
func (e *masterErrs) list() []error {
	var out []error
	for _, me := range e.by {
		if me != nil {
			out = append(out, me)
		}
	}
	return append(out, e.other...)
}

// rank orders what can be said of one master in one operation.
func rank(err error) int {
	switch {
	case errors.Is(err, ErrDuplicate):
		return 5
	case errors.Is(err, ErrHeldByOther), errors.Is(err, ErrKeyAbsent), errors.Is(err, ErrCounterAhead), errors.Is(err, ErrReplyError):
		return 4 // its answer
	case errors.Is(err, ErrUnreachable), errors.Is(err, ErrMasterTimeout), errors.Is(err, ErrMasterBusy), errors.Is(err, ErrClosed):
		return 3
	case errors.Is(err, ErrNotWaitedFor):
		return 2
	}
	return 1 // why it does not count by itself
}
