package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"strings"
	"sync/atomic"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

// Env is what a redlockctl invocation reads and writes besides its
// arguments: main passes the process's own; tests inject buffers and a map.
type Env struct {
	Stdin          io.Reader
	Stdout, Stderr io.Writer
	// Getenv reads REDLOCK_MASTERS and REDLOCK_PASSWORD (default os.Getenv).
	Getenv func(string) string
	// Signals delivers SIGINT and SIGTERM (nil: none). `run` forwards them to
	// its child; every other command stops its work and exits 1.
	Signals <-chan os.Signal
}

// Execute runs redlockctl with args and returns the process exit code (see
// the exit code constants: 0 ok, 1 failed, 2 usage, 3 not acquired, 4 no
// quorum, 5 lease lost; `run` returns its child's code).
func Execute(ctx context.Context, args []string, env Env) int {
	if env.Stdin == nil {
		env.Stdin = strings.NewReader("")
	}
	if env.Getenv == nil {
		env.Getenv = os.Getenv
	}
	silenceRedisLogger()
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	app := &app{env: env}
	stopSignals := app.watchSignals(cancel)
	defer stopSignals()

	root := app.newRoot()
	root.SetArgs(args)
	root.SetIn(env.Stdin)
	root.SetOut(env.Stdout)
	root.SetErr(env.Stderr)
	err := root.ExecuteContext(ctx)
	if err == nil {
		return ExitOK
	}
	code := app.exitCode(err)
	var q quietError
	if !errors.As(err, &q) {
		fmt.Fprintln(env.Stderr, "redlockctl:", inspect.Summary(err))
	}
	if code == ExitUsage && !app.started {
		fmt.Fprintln(env.Stderr, "Run 'redlockctl --help' for usage.")
	}
	return code
}

// app is one invocation: its environment and global flags.
type app struct {
	env     Env
	g       globals
	started bool // flags and arguments were accepted: later errors are not usage errors

	forward atomic.Pointer[func(os.Signal)] // set by `run` while its child runs
}

// watchSignals cancels the invocation on SIGINT/SIGTERM, unless `run` is
// forwarding them to its child.
func (a *app) watchSignals(cancel context.CancelFunc) (stop func()) {
	if a.env.Signals == nil {
		return func() {}
	}
	done := make(chan struct{})
	ended := make(chan struct{})
	go func() {
		defer close(ended)
		for {
			select {
			case <-done:
				return
			case s := <-a.env.Signals:
				if f := a.forward.Load(); f != nil {
					(*f)(s)
				} else {
					cancel()
				}
			}
		}
	}()
	return func() { close(done); <-ended }
}

const rootLong = `redlockctl inspects and operates quorum locks (Redlock with fencing tokens) held on
independent Redis masters.

Masters come from --masters or REDLOCK_MASTERS (comma-separated redis:// or rediss:// URLs);
a password for masters whose URL has none from --password-file or REDLOCK_PASSWORD (never
on the command line).

Exit codes:
  0  success
  1  an operation failed (an error talking to masters, a finding of doctor or audit)
  2  usage: unknown command or flag, bad value
  3  not acquired: the lock is held by another owner
  4  no quorum: fewer than a majority of masters answered or may vote
  5  lease lost: extend/unlock of a lost lease, or run's lease lost under its command
  run otherwise exits with its command's code; --conflict-exit-code replaces 3 and 4 for run.`

func (a *app) newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:   "redlockctl",
		Short: "Operate quorum locks on independent Redis masters",
		Long:  rootLong,
		Example: `  export REDLOCK_MASTERS=redis://10.0.0.1:6379,redis://10.0.0.2:6379,redis://10.0.0.3:6379
  redlockctl status                     # one line per master and a quorum verdict
  redlockctl status invoice:7           # who holds invoice:7, on which masters
  redlockctl run nightly --ttl 30s -- ./nightly.sh`,
		SilenceUsage:      true,
		SilenceErrors:     true,
		CompletionOptions: cobra.CompletionOptions{DisableDefaultCmd: true},
		PersistentPreRunE: func(cmd *cobra.Command, _ []string) error {
			if err := a.g.validate(cmd.Flags().Changed); err != nil {
				return usageError{err}
			}
			a.started = true
			return nil
		},
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	a.g.register(root)
	root.AddCommand(
		a.newStatusCmd(), a.newLockCmd(), a.newExtendCmd(), a.newUnlockCmd(), a.newRunCmd(),
		a.newAuditCmd(), a.newDoctorCmd(), a.newRepairCmd(), a.newCountersCmd(), a.newSemCmd(), a.newDemoCmd(), a.newBenchCmd(), a.newVersionCmd(),
	)
	return root
}
