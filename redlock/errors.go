package redlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/hashicorp/go-multierror"
)

var (
	// ErrNotAcquired means the lock could not be taken: another owner holds it
	// on enough masters, or (see ErrNoQuorum) too few masters answered.
	ErrNotAcquired = errors.New("redlock: not acquired")

	// ErrNoQuorum means fewer than a majority of masters answered in time. It
	// also matches ErrNotAcquired.
	ErrNoQuorum error = noQuorumError{}

	// ErrLockLost means a lease is no longer held: its validity ran out, its
	// keys expired or were taken over, or renewal failed. Extend and Release
	// return it for a lost lease; they never succeed silently.
	ErrLockLost = errors.New("redlock: lock lost")

	// ErrInvalidArgument is returned (wrapped, with a message naming the
	// problem) for bad input: an empty key, a non-positive or too short TTL,
	// a nil client, an unusable option value.
	ErrInvalidArgument = errors.New("redlock: invalid argument")

	// ErrReleased is the cause of a lease's Context after Release.
	ErrReleased = errors.New("redlock: lease released")

	// ErrClosed is returned by calls on a Client after Close.
	ErrClosed = errors.New("redlock: client closed")

	// ErrHeldByOther is a per-master error: that master's key belongs to
	// another owner.
	ErrHeldByOther = errors.New("held by another owner")

	// ErrMasterTimeout is a per-master error: the master did not answer
	// within the per-master timeout.
	ErrMasterTimeout = errors.New("no answer within the per-master timeout")

	// ErrMasterBusy is a per-master error: too many commands to that master
	// are still waiting for an answer, so nothing more was sent to it.
	ErrMasterBusy = errors.New("too many commands in flight (master stalled?)")

	// ErrTokensExhausted means the key's fencing counter reached
	// fencing.MaxToken (2^53 − 1): no greater token can be handed out. Lock
	// does not retry it.
	ErrTokensExhausted = errors.New("redlock: fencing tokens exhausted")

	// ErrQuarantined is a per-master error: the master restarted (or is
	// younger than the longest TTL in use) and does not vote yet.
	ErrQuarantined = errors.New("quarantined after a restart")
)

type noQuorumError struct{}

func (noQuorumError) Error() string { return "redlock: fewer than a majority of masters answered" }

func (noQuorumError) Is(target error) bool { return target == ErrNotAcquired }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// MasterError is one master's part of a failed operation.
type MasterError struct {
	Master int    // index in the slice given to New
	Addr   string // the client's address, for humans
	Err    error
}

func (e *MasterError) Error() string {
	return fmt.Sprintf("master %d (%s): %v", e.Master, e.Addr, e.Err)
}

func (e *MasterError) Unwrap() error { return e.Err }

// Error is returned by TryLock, Lock, Extend and Release when they fail. It
// matches (errors.Is) its Kind (ErrNotAcquired, ErrNoQuorum or ErrLockLost),
// the context's error when the context ended, and every per-master error.
type Error struct {
	Op      string // "lock", "extend" or "release"
	Key     string
	Kind    error // ErrNotAcquired, ErrNoQuorum or ErrLockLost
	Granted int   // masters that agreed
	Quorum  int   // masters needed
	Cause   error // the context's error, if it ended; for a lease that had already ended, why; else nil
	Masters *multierror.Error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q: %v (%d of %d needed)", e.Op, e.Key, e.Kind, e.Granted, e.Quorum)
	if e.Cause != nil {
		fmt.Fprintf(&b, ": %v", e.Cause)
	}
	if e.Masters != nil && len(e.Masters.Errors) > 0 {
		parts := make([]string, len(e.Masters.Errors))
		for i, me := range e.Masters.Errors {
			parts[i] = me.Error()
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, "; "))
	}
	return b.String()
}

// Unwrap exposes Kind, Cause and the per-master errors to errors.Is/As.
func (e *Error) Unwrap() []error {
	out := []error{e.Kind}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	if e.Masters != nil {
		out = append(out, e.Masters.Errors...)
	}
	return out
}
