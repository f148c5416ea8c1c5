package main

import (
	"context"
	"fmt"
	"io"
	"os"
	"os/signal"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"
	tclog "github.com/testcontainers/testcontainers-go/log"
)

// usageError marks bad usage (exit 2).
type usageError struct{ error }

// exitError carries a verdict's exit code.
type exitError struct{ code int }

func (e exitError) Error() string { return fmt.Sprintf("exit %d", e.code) }

// quiet drops go-redis's and testcontainers' own log lines (connections the
// suite closes under a client on purpose, the Docker banner); the suite
// reports through the history, its output and --debug.
type quiet struct{}

func (quiet) Printf(context.Context, string, ...any) {}

func main() {
	redis.SetLogger(quiet{})
	tclog.SetDefault(tclog.NewNoopLogger())
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt)
	code := run(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}

// run executes the command line and returns the exit code.
func run(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := &cobra.Command{
		Use:           "jepsen-like",
		Short:         "A Jepsen-like fault suite for quorumlock's Redlock",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetOut(stdout)
	root.SetErr(stderr)
	root.SetArgs(args)
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(runCmd(), checkCmd(), tableCmd(), mutantsCmd())
	err := root.ExecuteContext(ctx)
	switch e := err.(type) {
	case nil:
		return 0
	case exitError:
		return e.code
	default:
		fmt.Fprintln(stderr, "jepsen-like:", err)
		return 2
	}
}
