package cli

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
	"github.com/quorumlock/quorumlock/redlock"
)

// Environment variables run passes to its command.
const (
	EnvKey        = "REDLOCK_KEY"
	EnvToken      = "REDLOCK_TOKEN"
	EnvValidUntil = "REDLOCK_VALID_UNTIL"
)

type runFlags struct {
	key          string
	ttl, wait    time.Duration
	conflictCode int
	killGrace    time.Duration
}

func (a *app) newRunCmd() *cobra.Command {
	var f runFlags
	cmd := &cobra.Command{
		Use:   "run KEY --ttl D [--wait D] [--conflict-exit-code N] [--kill-grace D] -- CMD ARGS...",
		Short: "Run a command under a lock, extended while it runs (like flock(1))",
		Long: `run takes the lock KEY, runs CMD under it with automatic extension (every TTL/3) and releases
the lock when CMD ends. CMD gets REDLOCK_KEY, REDLOCK_TOKEN (the fencing token: pass it to the
stores you write to) and REDLOCK_VALID_UNTIL (RFC 3339; the validity at start, extended while
CMD runs). --key KEY is an alias of the KEY argument.

On Linux CMD runs in a session and process group of its own, and run signals the whole group:
SIGINT and SIGTERM sent to redlockctl are forwarded to it (CMD has no controlling terminal).
If the lease is lost while CMD runs (a renewal failed: the key expired, was deleted or taken,
or a majority of masters stopped answering), the group gets SIGTERM, then whatever of it still
runs after --kill-grace gets SIGKILL, and run exits 5 once the group has ended: a job's own
children (a loop in a child shell) stop too. If redlockctl itself is killed, CMD is SIGKILLed
too (Linux; its children are not). Processes CMD leaves running in the background when it exits
normally are not stopped, and the lock is released when CMD exits.
Otherwise run exits with CMD's code (128+N when CMD died of signal N; 127 when
CMD could not be found, 126 when it could not be started). When the lock cannot be taken run
exits 3 (held by another owner) or 4 (no quorum), or --conflict-exit-code for both, with one
line on stderr.`,
		Example: `  redlockctl run nightly-report --ttl 30s -- ./report.sh --full
  redlockctl run cron:backup --ttl 1m --conflict-exit-code 0 -- backup.sh   # skip if running elsewhere`,
		RunE: func(cmd *cobra.Command, args []string) error {
			command, err := f.validate(cmd, args)
			if err != nil {
				return usageError{err}
			}
			return a.run(cmd, f, command)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "the lock key (an alias of KEY; both given must agree)")
	fl.DurationVar(&f.ttl, "ttl", 0, "lock TTL, extended every TTL/3 while CMD runs (required, > 0)")
	fl.DurationVar(&f.wait, "wait", 0, "wait up to this long for the lock (0: one attempt)")
	fl.IntVar(&f.conflictCode, "conflict-exit-code", -1, "exit code when the lock is not acquired or there is no quorum (replaces 3 and 4)")
	fl.DurationVar(&f.killGrace, "kill-grace", 10*time.Second, "time between SIGTERM and SIGKILL when the lease is lost")
	return cmd
}

// validate checks the flags and splits args into the key and the command:
// KEY is the first argument (before --), or --key (its alias; both given
// must agree); the command follows.
func (f *runFlags) validate(cmd *cobra.Command, args []string) ([]string, error) {
	before := args
	if dash := cmd.ArgsLenAtDash(); dash >= 0 {
		before = args[:dash]
	} else if f.key != "" {
		before = nil // run --key K --ttl D CMD...: everything is the command
	} else if len(before) > 1 {
		before = before[:1] // run KEY --ttl D CMD...
	}
	switch {
	case len(before) > 1:
		return nil, fmt.Errorf("run takes one KEY before -- (got %d arguments: %q)", len(before), before)
	case len(before) == 1 && f.key != "" && before[0] != f.key:
		return nil, fmt.Errorf("run: KEY %q and --key %q differ: give the key once", before[0], f.key)
	case len(before) == 1:
		f.key = before[0]
	}
	command := args[len(before):]
	switch {
	case f.key == "":
		return nil, errors.New("run needs KEY, e.g. run nightly --ttl 30s -- ./job.sh")
	case !cmd.Flags().Changed("ttl"):
		return nil, errors.New("--ttl is required (e.g. --ttl 30s)")
	case f.ttl <= 0:
		return nil, fmt.Errorf("--ttl %v: must be positive", f.ttl)
	case f.wait < 0:
		return nil, fmt.Errorf("--wait %v: must not be negative", f.wait)
	case f.killGrace <= 0:
		return nil, fmt.Errorf("--kill-grace %v: must be positive", f.killGrace)
	case cmd.Flags().Changed("conflict-exit-code") && (f.conflictCode < 0 || f.conflictCode > 255):
		return nil, fmt.Errorf("--conflict-exit-code %d: must be 0 to 255", f.conflictCode)
	case len(command) == 0:
		return nil, errors.New("run needs a command after --, e.g. run nightly --ttl 30s -- ./job.sh")
	}
	return command, nil
}

func (a *app) run(cmd *cobra.Command, f runFlags, args []string) error {
	ctx := cmd.Context()
	stderr := cmd.ErrOrStderr()
	c, locks, err := a.locker(ctx)
	if err != nil {
		return err
	}
	defer c.Close()
	defer locks.Close()
	lease, err := acquire(ctx, locks, f.key, f.ttl, f.wait, redlock.WithAutoExtend())
	if err != nil {
		if f.conflictCode >= 0 && errors.Is(err, redlock.ErrNotAcquired) {
			// "Skip quietly" (cron): the one summary line, not a line per
			// master.
			return codeError{f.conflictCode, err}
		}
		a.explain(stderr, err)
		return err
	}
	release := func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.g.timeout)
		defer cancel()
		if err := lease.Release(rctx); err != nil && !errors.Is(err, redlock.ErrLockLost) {
			fmt.Fprintf(stderr, "redlockctl: run: releasing %q: %s\n", f.key, inspect.Summary(err))
			a.explain(stderr, err)
		}
	}

	cmdline := exec.Command(args[0], args[1:]...)
	cmdline.Stdin, cmdline.Stdout, cmdline.Stderr = a.env.Stdin, cmd.OutOrStdout(), stderr
	cmdline.SysProcAttr = childAttr()
	if r, ok := a.env.Stdin.(*os.File); ok {
		cmdline.Stdin = r
	}
	cmdline.Env = append(os.Environ(),
		EnvKey+"="+f.key,
		EnvToken+"="+strconv.FormatUint(uint64(lease.Token()), 10),
		EnvValidUntil+"="+lease.ValidUntil().Format(time.RFC3339Nano),
	)
	// Signals that arrive from here on are CMD's (its whole process group's):
	// held back until it has started, then forwarded.
	var mu sync.Mutex
	var pending []os.Signal
	var child *proc
	send := func(s os.Signal) { // mu held, child started
		if sig, ok := s.(syscall.Signal); ok {
			child.signal(sig)
		} else {
			_ = cmdline.Process.Signal(s)
		}
	}
	fwd := func(s os.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if child == nil {
			pending = append(pending, s)
			return
		}
		send(s)
	}
	a.forward.Store(&fwd)
	defer a.forward.Store(nil)
	mu.Lock()
	err = cmdline.Start()
	if err == nil {
		child = watch(cmdline)
		for _, s := range pending {
			send(s)
		}
	}
	mu.Unlock()
	if err != nil {
		release()
		code := 126
		if errors.Is(err, exec.ErrNotFound) || errors.Is(err, os.ErrNotExist) {
			code = 127
		}
		return codeError{code, fmt.Errorf("run: %w", err)}
	}
	select {
	case <-child.exited:
		err := child.wait()
		if lost := lease.Err(); lost != nil {
			// The lease ended before CMD's end was seen: CMD may have run its
			// last part without the lock. Say so rather than pass its code on.
			return codeError{ExitLeaseLost, fmt.Errorf("run: lease lost while the command ran (it has ended): %w", lost)}
		}
		release()
		return childExit(err)
	case <-ctx.Done():
		// The invocation was cancelled (not by a forwarded signal): stop CMD.
		_ = child.stop(stderr, f.killGrace, "redlockctl: run: cancelled")
		release()
		return codeError{ExitFailed, ctx.Err()}
	case <-lease.Done():
		cause := context.Cause(lease.Context())
		_ = child.stop(stderr, f.killGrace, fmt.Sprintf("redlockctl: run: lease on %q lost (%v)", f.key, cause))
		return codeError{ExitLeaseLost, fmt.Errorf("run: lease lost while the command ran: %w", cause)}
	}
}

// childExit turns the child's end into run's exit code.
func childExit(err error) error {
	if err == nil {
		return nil
	}
	var ee *exec.ExitError
	if !errors.As(err, &ee) {
		return fmt.Errorf("run: %w", err)
	}
	code := ee.ExitCode()
	if ws, ok := ee.Sys().(syscall.WaitStatus); ok && ws.Signaled() {
		code = 128 + int(ws.Signal())
	}
	return quietError{code}
}
