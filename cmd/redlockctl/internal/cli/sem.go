package cli

import (
	"errors"
	"fmt"

	"github.com/spf13/cobra"
)

// errSemUnavailable is sem's answer until the semaphore package is wired in.
var errSemUnavailable = errors.New("sem: not available yet: the counting semaphores (package redlock/semaphore) are not part of this build")

func (a *app) newSemCmd() *cobra.Command {
	var limit int
	sem := &cobra.Command{
		Use:   "sem status|acquire|release|refresh NAME --limit N",
		Short: "Counting semaphores on the masters (not available yet)",
		Long: `sem operates counting semaphores of --limit holders on the masters. It is not available in this
build: the semaphore package (redlock/semaphore) is not wired in yet, and every subcommand exits 1
saying so.`,
		Example: `  redlockctl sem status exports --limit 4`,
		Args:    cobra.NoArgs,
	}
	for _, name := range []string{"status", "acquire", "release", "refresh"} {
		sub := &cobra.Command{
			Use:     name + " NAME --limit N",
			Short:   name + " a counting semaphore (not available yet)",
			Example: fmt.Sprintf("  redlockctl sem %s exports --limit 4", name),
			Args:    exactArgs(1, "NAME"),
			RunE: func(cmd *cobra.Command, _ []string) error {
				if limit < 1 {
					return usageError{fmt.Errorf("--limit %d: must be at least 1", limit)}
				}
				return codeError{ExitFailed, errSemUnavailable}
			},
		}
		sub.Flags().IntVar(&limit, "limit", 0, "holders allowed at once (required, >= 1)")
		sem.AddCommand(sub)
	}
	return sem
}
