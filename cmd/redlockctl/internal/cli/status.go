package cli

import (
	"context"
	"fmt"
	"strings"
	"text/tabwriter"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
)

func newStatusCmd() *cobra.Command {
	var masters string
	var longest, timeout time.Duration
	cmd := &cobra.Command{
		Use:   "status",
		Short: "Check every master: reachability, latency, clock offset, persistence, quarantine",
		Long: "status probes every master of the cluster (--masters, or REDLOCK_MASTERS) and prints one line per master.\n" +
			"It exits 1 when fewer than a majority of masters are reachable and out of quarantine.",
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			ctx, cancel := context.WithTimeout(cmd.Context(), timeout)
			defer cancel()
			opts := []cluster.Option{cluster.WithLongestTTL(longest)}
			var c *cluster.Cluster
			var err error
			if masters != "" {
				c, err = cluster.Dial(ctx, strings.Split(masters, ","), opts...)
			} else {
				c, err = cluster.FromEnv(ctx, opts...)
			}
			if err != nil {
				return usageError{err}
			}
			defer c.Close()
			return printStatus(cmd, c.Check(ctx))
		},
	}
	cmd.Flags().StringVar(&masters, "masters", "", "comma-separated redis:// URLs (default: $REDLOCK_MASTERS)")
	cmd.Flags().DurationVar(&longest, "longest-ttl", 30*time.Second, "longest lock TTL in use (sizes restart quarantine)")
	cmd.Flags().DurationVar(&timeout, "timeout", 2*time.Second, "time allowed for the whole check")
	return cmd
}

func printStatus(cmd *cobra.Command, st []cluster.MasterStatus) error {
	w := tabwriter.NewWriter(cmd.OutOrStdout(), 0, 4, 2, ' ', 0)
	fmt.Fprintln(w, "#\tMASTER\tUP\tLATENCY\tCLOCK\tVERSION\tUPTIME\tAOF\tFSYNC\tDELEX\tVOTES")
	voting := 0
	for _, s := range st {
		if !s.Reachable {
			fmt.Fprintf(w, "%d\t%s\tno\t-\t-\t-\t-\t-\t-\t-\tno: %v\n", s.Master, s.URL, s.Err)
			continue
		}
		votes := "yes"
		if s.Fresh {
			votes = "yes (fresh cluster: the first lock marks every master)"
		}
		if s.Quarantined {
			votes = "no: " + s.QuarantineReason
		} else {
			voting++
		}
		fmt.Fprintf(w, "%d\t%s\tyes\t%v\t%+v\t%s\t%v\t%v\t%s\t%v\t%s\n", s.Master, s.URL,
			s.Latency.Round(time.Microsecond), s.ClockOffset.Round(time.Millisecond), s.Version,
			s.Uptime, s.AOF, orDash(s.AppendFsync), s.DELEX, votes)
	}
	if err := w.Flush(); err != nil {
		return err
	}
	need := len(st)/2 + 1
	fmt.Fprintf(cmd.OutOrStdout(), "%d of %d masters vote; a lock needs %d.\n", voting, len(st), need)
	if voting < need {
		return fmt.Errorf("no quorum: %d voting masters, %d needed", voting, need)
	}
	return nil
}

func orDash(s string) string {
	if s == "" {
		return "-"
	}
	return s
}
