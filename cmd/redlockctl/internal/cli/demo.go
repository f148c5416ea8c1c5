package cli

import (
	"errors"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/demo"
)

func newDemoCmd() *cobra.Command {
	var cfg demo.Config
	cmd := &cobra.Command{
		Use:   "demo",
		Short: "Run the quorum lock on five embedded masters: contention, a paused minority, a lost majority, fencing",
		Long: "demo starts five in-process Redis masters (miniredis) behind pausable proxies and runs contending\n" +
			"workers that increment one balance under the lock, through a store that checks fencing tokens.\n" +
			"It pauses a minority of masters, then a majority, fences off a stale holder, and checks that no\n" +
			"key is left behind. It needs nothing installed and exits 1 if any check fails.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			res, err := demo.Run(cmd.Context(), cmd.OutOrStdout(), cfg)
			if err != nil {
				return usageError{err}
			}
			if !res.OK {
				return errors.New("demo: a check failed")
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.IntVar(&cfg.Masters, "masters", 5, "embedded masters (3 to 9)")
	f.IntVar(&cfg.Processes, "processes", 2, "contending clients")
	f.IntVar(&cfg.Workers, "workers", 4, "goroutines per client")
	f.IntVar(&cfg.Increments, "increments", 10, "critical sections per worker and phase")
	f.DurationVar(&cfg.TTL, "ttl", 2*time.Second, "lock TTL")
	return cmd
}
