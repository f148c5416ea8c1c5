package redlock

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/quorum"
)

var (
	// ErrNotAcquired means the lock could not be taken: another owner holds it
	// on enough masters, or (see ErrNoQuorum) too few masters answered or
	// may vote.
	ErrNotAcquired = errors.New("redlock: not acquired")

	// ErrNoQuorum means fewer than a majority of masters answered in time or
	// may vote now. It also matches ErrNotAcquired.
	ErrNoQuorum error = noQuorumError{}

	// ErrLockLost means a lease is no longer held: its validity ran out, its
	// keys expired or were taken over, or renewal failed. Extend and Release
	// return it for a lost lease; they never succeed silently.
	ErrLockLost = errors.New("redlock: lock lost")

	// ErrInvalidArgument is returned (wrapped, with a message naming the
	// problem) for bad input: an empty key, a non-positive or too short TTL,
	// a nil client or context or lease, an unusable option value.
	ErrInvalidArgument = errors.New("redlock: invalid argument")

	// ErrReleased is the cause of a lease's Context after Release.
	ErrReleased = errors.New("redlock: lease released")

	// ErrClosed is returned by calls on a Client, or on its leases, after
	// Close.
	ErrClosed = errors.New("redlock: client closed")

	// ErrTokensExhausted means the key's fencing counter reached
	// fencing.MaxToken (2^53 − 1): no greater token can be handed out. Lock
	// does not retry it.
	ErrTokensExhausted = errors.New("redlock: fencing tokens exhausted")

	// ErrMisconfigured means so many masters refuse the library's commands
	// for a reason waiting does not change that no majority is possible
	// until an operator acts: an ACL without a command, key pattern or
	// channel the library needs (NOPERM, or inside a script Redis 7.0's "ERR
	// The user executing the script can't ..."), wrong credentials (NOAUTH,
	// WRONGPASS), a value of another type at the lock's key or its fencing
	// counter (WRONGTYPE), a command renamed away (unknown command), or one
	// server given twice (ErrDuplicate). An *Error of TryLock or Lock
	// matches it then (besides ErrNoQuorum and the per-master errors); Lock
	// and LockAll return it at once instead of waiting for ctx to end. The
	// semaphores of package redlock/semaphore return errors matching it in
	// the same cases (for one master, when it refuses), and their Acquire
	// stops at once too.
	ErrMisconfigured = errors.New("redlock: masters refuse the library's commands (configuration)")

	// Per-master states. Each MasterError wraps exactly one of these, so
	// errors.Is tells them apart; the text after the sentinel says more (the
	// cause of an unreachable master, when a quarantined master votes again).

	// ErrUnreachable: the master could not be reached (connection refused,
	// timeout, auth, TLS, DNS: the MasterError's text names the cause).
	ErrUnreachable = probe.ErrUnreachable

	// ErrMasterTimeout: the command was sent but no answer came within the
	// per-master timeout (WithMasterTimeout).
	ErrMasterTimeout = errors.New("no answer within the per-master timeout")

	// ErrNotWaitedFor: the round had already decided (a majority, or the
	// impossibility of one) before this master answered; or the master let
	// an earlier round time out and has not answered since.
	ErrNotWaitedFor = errors.New("not waited for")

	// ErrMasterBusy: too many commands to that master are still waiting for
	// an answer, so nothing more was sent to it.
	ErrMasterBusy = errors.New("too many commands in flight (master stalled?)")

	// ErrHeldByOther: that master's key belongs to another owner.
	ErrHeldByOther = errors.New("held by another owner")

	// ErrKeyAbsent: the lease's key is not on that master (it expired, or
	// went with the master's data).
	ErrKeyAbsent = errors.New("the lease's key is not there")

	// ErrCounterAhead: during a write-back, the master's fencing counter was
	// already at or above the new token (another key of the same bucket, or
	// a rejoining master's sync, raised it); the write-back is tried again
	// with a higher token.
	ErrCounterAhead = errors.New("fencing counter at or above the token")

	// ErrReplyError: the master answered with an error reply (OOM,
	// READONLY, NOPERM, ...), quoted after it.
	ErrReplyError = errors.New("error reply")

	// ErrQuarantined matches every reason a reachable master does not count
	// by itself: ErrNotCertified, ErrDataLost, ErrRestarted, ErrPromoted,
	// ErrRaisingCounters, ErrNotProbed, ErrReplica and ErrDuplicate. Such a
	// master is still asked: its yes counts in a round every master grants.
	ErrQuarantined = probe.ErrQuarantined

	// ErrNotCertified: the master carries no quorumlock record at all (a
	// fresh master, or one that lost everything); a cluster of them is
	// certified at once when enough of them answer (docs/safety.md, rule S).
	ErrNotCertified = probe.ErrNotCertified
	// ErrDataLost: the master has no certificate although it carries other
	// records (a FLUSHALL, an empty restart, or a certification that did not
	// finish); it waits the longest TTL in use from when this client first
	// saw it so, then its counters are raised.
	ErrDataLost = probe.ErrDataLost
	// ErrRestarted: the master's certificate names another process: it
	// restarted (with whatever persistence), or another server took its
	// place; it waits the longest TTL from when first seen so, then its
	// counters are raised.
	ErrRestarted = probe.ErrRestarted
	// ErrPromoted: the master's replication id changed since it was
	// certified: it was a replica and was promoted, failed back or was fully
	// resynced, and may lack writes; it waits like ErrRestarted.
	ErrPromoted = probe.ErrPromoted
	// ErrRaisingCounters: the master's time quarantine is over and its
	// fencing counters are being raised from the other masters, or are
	// waiting for enough of them (the text says which).
	ErrRaisingCounters = probe.ErrRaisingCounters
	// ErrNotProbed: no probe of the master has answered yet.
	ErrNotProbed = probe.ErrNotProbed
	// ErrReplica: the master answers as a replica (role:slave).
	ErrReplica = probe.ErrReplica
	// ErrDuplicate: two of the masters given to New are the same server
	// (one master_replid answers at both addresses): no lock is taken until
	// the configuration is fixed.
	ErrDuplicate = probe.ErrDuplicate
)

type noQuorumError struct{}

func (noQuorumError) Error() string { return "redlock: no quorum" }

func (noQuorumError) Is(target error) bool { return target == ErrNotAcquired }

func invalid(format string, args ...any) error {
	return fmt.Errorf("%w: %s", ErrInvalidArgument, fmt.Sprintf(format, args...))
}

// MasterError is one master's part of a failed operation; an Error holds at
// most one per master. Err wraps one of the per-master sentinels
// (ErrUnreachable, ErrMasterTimeout, ErrNotWaitedFor, ErrMasterBusy,
// ErrHeldByOther, ErrKeyAbsent, ErrCounterAhead, ErrReplyError, or a reason
// matching ErrQuarantined).
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
	Op       string // "lock", "extend" or "release"
	Key      string
	Kind     error // ErrNotAcquired, ErrNoQuorum or ErrLockLost
	Granted  int   // masters that said yes
	Counted  int   // of those, the masters whose yes counted
	Quorum   int   // masters needed
	Answered int   // masters that answered at all
	Of       int   // masters in the cluster
	Cause    error // the context's error, if it ended; for a lease that had already ended, why; else nil
	Masters  []error
}

func (e *Error) Error() string {
	var b strings.Builder
	fmt.Fprintf(&b, "%s %q: ", e.Op, e.Key)
	if errors.Is(e.Cause, ErrReleased) && e.Answered == 0 {
		// Nothing was sent: the lease had been released.
		b.WriteString("the lease was released")
		return b.String()
	}
	fmt.Fprintf(&b, "%v", e.Kind)
	if e.Of > 0 { // the masters were asked
		fmt.Fprintf(&b, ": %s", quorum.Tally{Granted: e.Granted, Counted: e.Counted, Needed: e.Quorum, Answered: e.Answered, Masters: e.Of})
	}
	if e.Cause != nil {
		fmt.Fprintf(&b, "; %v", e.Cause)
	}
	if len(e.Masters) > 0 {
		parts := make([]string, len(e.Masters))
		for i, me := range e.Masters {
			parts[i] = me.Error()
		}
		fmt.Fprintf(&b, " [%s]", strings.Join(parts, "; "))
	}
	return b.String()
}

// Unwrap exposes Kind, Cause and the per-master errors to errors.Is/As.
func (e *Error) Unwrap() []error {
	out := []error{e.Kind}
	if e.misconfigured() {
		out = append(out, ErrMisconfigured)
	}
	if e.Cause != nil {
		out = append(out, e.Cause)
	}
	return append(out, e.Masters...)
}
