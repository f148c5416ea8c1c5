package cli

import (
	"context"
	"errors"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/redlock"
)

// Exit codes (documented in docs/cli.md and redlockctl --help).
const (
	ExitOK          = 0 // success
	ExitFailed      = 1 // an operation failed
	ExitUsage       = 2 // unknown command or flag, bad value
	ExitNotAcquired = 3 // held by another owner
	ExitNoQuorum    = 4 // fewer than a majority answered or may vote
	ExitLeaseLost   = 5 // the lease is lost
)

// usageError marks a usage problem: exit 2.
type usageError struct{ error }

func (e usageError) Unwrap() error { return e.error }

// codeError carries an explicit exit code.
type codeError struct {
	code int
	err  error
}

func (e codeError) Error() string { return e.err.Error() }
func (e codeError) Unwrap() error { return e.err }

// quietError carries an exit code for a failure the command already
// explained on stdout/stderr: Execute prints nothing more.
type quietError struct{ code int }

func (e quietError) Error() string { return "exit status" }

// exitCode maps an error to redlockctl's exit codes.
func (a *app) exitCode(err error) int {
	var u usageError
	var c codeError
	var q quietError
	switch {
	case errors.As(err, &q):
		return q.code
	case errors.As(err, &c):
		return c.code
	case errors.Is(err, context.Canceled):
		return ExitFailed // interrupted (SIGINT/SIGTERM)
	case errors.As(err, &u), !a.started:
		// Anything cobra refused before a command ran (unknown command, bad
		// argument count) is a usage error too.
		return ExitUsage
	case errors.Is(err, redlock.ErrInvalidArgument), errors.Is(err, cluster.ErrInvalidArgument):
		return ExitUsage
	case errors.Is(err, redlock.ErrLockLost):
		return ExitLeaseLost
	case errors.Is(err, redlock.ErrNoQuorum):
		return ExitNoQuorum
	case errors.Is(err, redlock.ErrNotAcquired):
		return ExitNotAcquired
	}
	return ExitFailed
}
