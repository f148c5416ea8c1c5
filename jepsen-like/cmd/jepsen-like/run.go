package main

import (
	"fmt"
	"log/slog"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/suite"
)

func runCmd() *cobra.Command {
	cfg := suite.Config{}
	var nemeses string
	var debug bool
	cmd := &cobra.Command{
		Use:   "run",
		Short: "Run the suite: clients, a seeded nemesis, checkers; writes DIR/history.jsonl, results.json, report.html",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if cfg.Out == "" {
				return usageError{fmt.Errorf("--out DIR is required")}
			}
			cfg.Nemeses = []string{nemeses}
			cfg.Progress = cmd.ErrOrStderr()
			if debug {
				cfg.Logger = slog.New(slog.NewTextHandler(cmd.ErrOrStderr(), &slog.HandlerOptions{Level: slog.LevelDebug}))
			}
			res, err := suite.Run(cmd.Context(), cfg)
			if err != nil {
				return err
			}
			printVerdict(cmd, res.Results)
			if res.NemesisErrors != "" {
				fmt.Fprintln(cmd.ErrOrStderr(), "nemesis errors:", res.NemesisErrors)
			}
			fmt.Fprintf(cmd.OutOrStdout(), "%d processes, %d acquisitions, faults: %s; wrote %s/{history.jsonl,results.json,report.html}\n",
				res.Processes, res.Acquired, suite.FaultCounts(res.Faults), cfg.Out)
			if c := checker.ExitCode(res.Verdict); c != 0 {
				return exitError{c}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&cfg.Backend, "backend", "local", "local (redis-server processes) or docker (testcontainers)")
	f.StringVar(&cfg.Workload, "workload", "lock", "lock, register, semaphore or set")
	f.StringVar(&nemeses, "nemesis", "none", "comma-separated: none, pause, kill, restart, restart-aof, restart-delayed, flush, failover, partition, bridge, ring, net-partition (docker), client-pause, slow-replies, clock-jump, data-loss, slow-extend, acquire-pause, stale-cache, restart-long, restart-long-merged, all")
	f.DurationVar(&cfg.Time, "time", 20*time.Second, "how long the clients run at least: every requested fault runs at least once, so a short --time with many faults runs longer")
	f.IntVar(&cfg.Clients, "clients", 4, "client slots (processes come and go in them)")
	f.Uint64Var(&cfg.Seed, "seed", 1, "seed of the schedule")
	f.StringVar(&cfg.Out, "out", "", "output directory")
	f.BoolVar(&cfg.NoQuarantine, "no-quarantine", false, "let restarted masters vote at once (redlock.WithoutQuarantine)")
	f.BoolVar(&cfg.NoFencing, "no-fencing", false, "no fencing tokens (redlock.WithFencing(false)) and a store that checks none")
	f.IntVar(&cfg.DataLossTolerance, "data-loss-tolerance", 0, "the clients use redlock.WithDataLossTolerance(N): a quorum of (M+N)/2+1 and no restart quarantine (0: a majority)")
	f.IntVar(&cfg.DataLossMasters, "data-loss-masters", 0, "the data-loss nemesis makes at most N distinct masters lose data within any two TTLs (0: max(1, --data-loss-tolerance))")
	f.IntVar(&cfg.BucketKeys, "bucket-keys", 0, "N extra processes, each taking and releasing a key of its own in the fence bucket of the workload's key (the tokens checker finds a token handed out twice in the bucket); needs fencing and a lock workload")
	f.BoolVar(&cfg.Long, "long", false, "at least 5 minutes and 10 clients")
	f.BoolVar(&debug, "debug", false, "log the suite's and redlock's debug messages to stderr")
	return cmd
}

func printVerdict(cmd *cobra.Command, results []checker.Result) {
	for _, r := range results {
		fmt.Fprintf(cmd.OutOrStdout(), "  %-16s %-8s %s\n", r.Checker, r.Verdict, r.Explanation)
	}
	fmt.Fprintf(cmd.OutOrStdout(), "verdict: %s (%s)\n", checker.Overall(results), checker.Summary(results))
}
