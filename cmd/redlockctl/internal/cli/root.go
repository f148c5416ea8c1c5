package cli

import (
	"context"
	"fmt"
	"io"

	"github.com/spf13/cobra"
)

// Execute runs redlockctl with args and returns the process exit code: 0 on
// success, 1 when the command failed, 2 for a usage error.
func Execute(ctx context.Context, args []string, stdout, stderr io.Writer) int {
	root := newRoot()
	root.SetArgs(args)
	root.SetOut(stdout)
	root.SetErr(stderr)
	if err := root.ExecuteContext(ctx); err != nil {
		fmt.Fprintln(stderr, "redlockctl:", err)
		if _, ok := err.(usageError); ok {
			return 2
		}
		return 1
	}
	return 0
}

type usageError struct{ error }

func newRoot() *cobra.Command {
	root := &cobra.Command{
		Use:           "redlockctl",
		Short:         "Operate quorum locks on independent Redis masters",
		SilenceUsage:  true,
		SilenceErrors: true,
	}
	root.SetFlagErrorFunc(func(_ *cobra.Command, err error) error { return usageError{err} })
	root.AddCommand(newDemoCmd(), newStatusCmd())
	return root
}
