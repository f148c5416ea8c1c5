package semaphore

import (
	"errors"
	"fmt"

	"github.com/quorumlock/quorumlock/redlock"
)

var (
	// ErrBusy means the semaphore is full: limit permits are held. TryAcquire
	// returns it at once; Acquire waits instead. Guarded also returns it when
	// another acquirer held the guard lock for longer than the guard wait
	// (WithGuardWait), and the multi-master Atomic when a concurrent acquirer
	// took the free slot it chose (see docs/semaphores.md).
	ErrBusy = errors.New("semaphore: busy")

	// ErrLost means a permit is no longer held: it timed out (no Refresh in
	// time), another client removed it, or a refresh failed. Refresh and
	// Release return errors matching it; they never re-acquire a lost permit.
	// ErrLost also matches redlock.ErrLockLost.
	ErrLost error = lostError{}

	// ErrInvalidArgument is returned (wrapped, with a message naming the
	// problem) for bad input. It is redlock's, so one errors.Is check covers
	// both packages.
	ErrInvalidArgument = redlock.ErrInvalidArgument

	// ErrReleased is what a second Release returns, and the cause of a
	// permit's Context after Release. It also matches redlock.ErrReleased.
	ErrReleased error = releasedError{}

	// ErrClosed is returned by calls on a Semaphore after Close. It is
	// redlock's.
	ErrClosed = redlock.ErrClosed

	// ErrDetached is the cause of a permit's Context after Detach, and what
	// Refresh and Release return for a detached permit.
	ErrDetached = errors.New("semaphore: permit detached")
)

// errContended marks an ErrBusy that came from losing a race with another
// acquirer rather than from a full semaphore: Acquire retries it after a
// short random delay instead of waiting for a release.
var errContended = errors.New("contended")

type lostError struct{}

func (lostError) Error() string { return "semaphore: permit lost" }

// Is makes ErrLost (and every error wrapping it) match redlock.ErrLockLost.
func (lostError) Is(target error) bool { return target == redlock.ErrLockLost }

type releasedError struct{}

func (releasedError) Error() string { return "semaphore: permit released" }

// Is makes ErrReleased (and every error wrapping it) match
// redlock.ErrReleased.
func (releasedError) Is(target error) bool { return target == redlock.ErrReleased }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: semaphore: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// limitMismatch is the error of a caller whose limit differs from the one
// the semaphore's holders use (recorded under LimitKey), naming both.
func limitMismatch(name string, limit int, stored, how string) error {
	return invalid("limit %d given, but the holders of %q use limit %s (recorded in %s): every client of one semaphore must use the same limit; %s",
		limit, name, stored, LimitKey(name), how)
}

// lost wraps why a permit was lost so that it matches ErrLost.
func lost(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrLost, fmt.Sprintf(format, args...))
}

// busy wraps why an attempt found the semaphore full so that it matches
// ErrBusy.
func busy(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrBusy, fmt.Sprintf(format, args...))
}

// contended is busy for an attempt that lost a race (see errContended).
func contended(format string, args ...any) error {
	return fmt.Errorf("%w: %w: %s", ErrBusy, errContended, fmt.Sprintf(format, args...))
}
