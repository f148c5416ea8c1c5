package semaphore

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/redlock"
)

// slotError is an error of a place's lease (several masters: each place is
// a Redlock lock) said in the semaphore's words: the operation on the
// place, what happened to the permit, the masters' count and each master's
// state, never the lock key's or a lock's vocabulary. errors.Is and As still
// match everything the lease's error matched (redlock.ErrNoQuorum,
// ErrLockLost, *redlock.Error, ...), and ErrLost when the permit was lost.
type slotError struct {
	name string
	op   string // "acquire", "refresh", "release", or "hold" (the lease ended by itself)
	slot int
	lost bool
	err  error
}

func (e *slotError) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "semaphore %q: %s of place %d: ", e.name, e.op, e.slot)
	var re *redlock.Error
	if !errors.As(e.err, &re) {
		msg := permitWords(e.err.Error())
		if e.lost && !strings.HasPrefix(msg, "permit lost") {
			b.WriteString("permit lost: ")
		}
		b.WriteString(msg)
		return b.String()
	}
	switch {
	case e.lost:
		b.WriteString("permit lost")
	case errors.Is(re, redlock.ErrMisconfigured):
		b.WriteString("masters refuse the commands (configuration)")
	case errors.Is(re.Kind, redlock.ErrNotAcquired):
		b.WriteString("place taken")
	default:
		b.WriteString(strings.TrimPrefix(re.Kind.Error(), "redlock: "))
	}
	if re.Of > 0 {
		fmt.Fprintf(&b, ": %s", quorum.Tally{Granted: re.Granted, Counted: re.Counted, Needed: re.Quorum, Answered: re.Answered, Masters: re.Of})
	}
	if re.Cause != nil {
		fmt.Fprintf(&b, "; %s", permitWords(re.Cause.Error()))
	}
	if len(re.Masters) > 0 {
		parts := make([]string, len(re.Masters))
		for i, me := range re.Masters {
			parts[i] = permitWords(me.Error())
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, "; "))
	}
	return b.String()
}

func (e *slotError) Unwrap() []error {
	if e.lost {
		return []error{ErrLost, e.err}
	}
	return []error{e.err}
}

// permitWords turns redlock's words for a lease into the semaphore's.
var permitWords = strings.NewReplacer(
	"redlock: lock lost", "permit lost",
	"redlock: lease released", "permit released",
	"lease released", "permit released",
	"held by another owner", "held by another permit",
	"the lease's key is not there", "the place is not held there",
).Replace

// slotErr wraps err, an error of place slot's lease during op; lost says
// the permit ended with it.
func (s *Semaphore) slotErr(op string, slot int, lost bool, err error) error {
	return &slotError{name: s.name, op: op, slot: slot, lost: lost, err: err}
}
