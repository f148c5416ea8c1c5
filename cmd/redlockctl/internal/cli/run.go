package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
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
		Use:   "run --key KEY --ttl D [--wait D] [--conflict-exit-code N] [--kill-grace D] -- CMD ARGS...",
		Short: "Run a command under a lock, extended while it runs (like flock(1))",
		Long: `run takes the lock KEY, runs CMD under it with automatic extension (every TTL/3) and releases
the lock when CMD ends. CMD gets REDLOCK_KEY, REDLOCK_TOKEN (the fencing token: pass it to the
stores you write to) and REDLOCK_VALID_UNTIL (RFC 3339; the validity at start, extended while
CMD runs). SIGINT and SIGTERM are forwarded to CMD.

If the lease is lost while CMD runs (a renewal failed: the key expired, was deleted or taken,
or a majority of masters stopped answering), CMD gets SIGTERM, then SIGKILL after --kill-grace,
and run exits 5. If redlockctl itself is killed, CMD is SIGKILLed too (Linux).
Otherwise run exits with CMD's code (128+N when CMD died of signal N; 127 when
CMD could not be found, 126 when it could not be started). When the lock cannot be taken run
exits 3 (held by another owner) or 4 (no quorum), or --conflict-exit-code for both.`,
		Example: `  redlockctl run --key nightly-report --ttl 30s -- ./report.sh --full
  redlockctl run --key cron:backup --ttl 1m --conflict-exit-code 0 -- backup.sh   # skip if running elsewhere`,
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := f.validate(cmd, args); err != nil {
				return usageError{err}
			}
			return a.run(cmd, f, args)
		},
	}
	fl := cmd.Flags()
	fl.StringVar(&f.key, "key", "", "lock key (required)")
	fl.DurationVar(&f.ttl, "ttl", 0, "lock TTL, extended every TTL/3 while CMD runs (required, > 0)")
	fl.DurationVar(&f.wait, "wait", 0, "wait up to this long for the lock (0: one attempt)")
	fl.IntVar(&f.conflictCode, "conflict-exit-code", -1, "exit code when the lock is not acquired or there is no quorum (replaces 3 and 4)")
	fl.DurationVar(&f.killGrace, "kill-grace", 10*time.Second, "time between SIGTERM and SIGKILL when the lease is lost")
	return cmd
}

func (f *runFlags) validate(cmd *cobra.Command, args []string) error {
	switch {
	case f.key == "":
		return errors.New("run needs --key KEY")
	case f.ttl <= 0:
		return fmt.Errorf("--ttl %v: must be positive", f.ttl)
	case f.wait < 0:
		return fmt.Errorf("--wait %v: must not be negative", f.wait)
	case f.killGrace <= 0:
		return fmt.Errorf("--kill-grace %v: must be positive", f.killGrace)
	case cmd.Flags().Changed("conflict-exit-code") && (f.conflictCode < 0 || f.conflictCode > 255):
		return fmt.Errorf("--conflict-exit-code %d: must be 0 to 255", f.conflictCode)
	case len(args) == 0:
		return errors.New("run needs a command after --, e.g. run --key k --ttl 30s -- ./job.sh")
	}
	return nil
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
		a.explain(stderr, err)
		if f.conflictCode >= 0 && errors.Is(err, redlock.ErrNotAcquired) {
			return codeError{f.conflictCode, err}
		}
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

	child := exec.Command(args[0], args[1:]...)
	child.Stdin, child.Stdout, child.Stderr = a.env.Stdin, cmd.OutOrStdout(), stderr
	child.SysProcAttr = childAttr()
	if r, ok := a.env.Stdin.(*os.File); ok {
		child.Stdin = r
	}
	child.Env = append(os.Environ(),
		EnvKey+"="+f.key,
		EnvToken+"="+strconv.FormatUint(uint64(lease.Token()), 10),
		EnvValidUntil+"="+lease.ValidUntil().Format(time.RFC3339Nano),
	)
	// Signals that arrive from here on are CMD's: held back until it has
	// started, then forwarded.
	var mu sync.Mutex
	var pending []os.Signal
	fwd := func(s os.Signal) {
		mu.Lock()
		defer mu.Unlock()
		if child.Process == nil {
			pending = append(pending, s)
			return
		}
		_ = child.Process.Signal(s)
	}
	a.forward.Store(&fwd)
	defer a.forward.Store(nil)
	mu.Lock()
	err = child.Start()
	if err == nil {
		for _, s := range pending {
			_ = child.Process.Signal(s)
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

	exited := make(chan error, 1)
	go func() { exited <- child.Wait() }()
	select {
	case err := <-exited:
		if lost := lease.Err(); lost != nil {
			// The lease ended before CMD's end was seen: CMD may have run its
			// last part without the lock. Say so rather than pass its code on.
			return codeError{ExitLeaseLost, fmt.Errorf("run: lease lost while the command ran (it has ended): %w", lost)}
		}
		release()
		return childExit(err)
	case <-ctx.Done():
		// The invocation was cancelled (not by a forwarded signal): stop CMD.
		stop(stderr, child, exited, f.killGrace, "redlockctl: run: cancelled")
		release()
		return codeError{ExitFailed, ctx.Err()}
	case <-lease.Done():
		cause := context.Cause(lease.Context())
		stop(stderr, child, exited, f.killGrace, fmt.Sprintf("redlockctl: run: lease on %q lost (%v)", f.key, cause))
		return codeError{ExitLeaseLost, fmt.Errorf("run: lease lost while the command ran: %w", cause)}
	}
}

// stop sends SIGTERM, then SIGKILL after grace, and waits for the child.
func stop(w io.Writer, child *exec.Cmd, exited <-chan error, grace time.Duration, why string) {
	fmt.Fprintf(w, "%s: sending SIGTERM to pid %d (SIGKILL in %v)\n", why, child.Process.Pid, grace)
	_ = child.Process.Signal(syscall.SIGTERM)
	t := time.NewTimer(grace)
	defer t.Stop()
	select {
	case <-exited:
	case <-t.C:
		fmt.Fprintf(w, "redlockctl: run: pid %d still running after %v: SIGKILL\n", child.Process.Pid, grace)
		_ = child.Process.Kill()
		<-exited
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
