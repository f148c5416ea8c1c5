package cli

import (
	"context"
	"fmt"
	"io"
	"sync"

	"github.com/redis/go-redis/v9"
	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/restart"
	"github.com/quorumlock/quorumlock/redlock"
)

// countersJSON is `counters -o json`.
type countersJSON struct {
	Masters []counterMaster `json:"masters"`
	Buckets int             `json:"buckets"` // the bucket count the masters record (0: none yet)
	Folded  bool            `json:"folded"`  // --fold --yes ran
}

type counterMaster struct {
	Master    int    `json:"master"`
	URL       string `json:"url"`
	Reachable bool   `json:"reachable"`
	Cause     string `json:"cause,omitempty"`
	Buckets   int    `json:"buckets"` // recorded on this master (0: none yet)
	Present   int    `json:"present"` // bucket counters present
	Legacy    int    `json:"legacy"`  // per-key counters of an earlier version left
	Moved     int    `json:"moved"`   // per-key counters folded by this run
}

func (a *app) newCountersCmd() *cobra.Command {
	var fold, yes bool
	cmd := &cobra.Command{
		Use:   "counters [--fold [--yes]]",
		Short: "Show the fencing counter space on each master; fold old per-key counters into buckets",
		Long: `counters says, for each master, how many fencing counter buckets its clients use, how many of
them exist (at most that many, whatever the number of keys ever locked), and how many per-key
counters of an earlier version (quorumlock:fence:KEY) are left.

Per-key counters keep working: a lock reads the largest of its bucket's counter, its per-key counter
and the token floor. --fold --yes moves each into its key's bucket and deletes it, in atomic batches
on each master: the bucket is raised to the old counter before it goes, so no lock ever reads a lower
counter than before, on any master, at any time (docs/fencing.md, "Buckets"). It needs no quorum
and may run while clients lock. Without --yes, --fold only says what it would do.`,
		Example: `  redlockctl counters
  redlockctl counters --fold          # what would be folded
  redlockctl counters --fold --yes    # fold and delete the old per-key counters`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if yes && !fold {
				return usageError{fmt.Errorf("--yes confirms --fold, which is not given")}
			}
			c, err := a.connect(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			ctx, cancel := context.WithTimeout(cmd.Context(), a.g.timeout*20)
			defer cancel()
			out := countersJSON{Masters: readCounters(ctx, c.URLs(), c.Clients())}
			out.Buckets, err = recordedBuckets(out.Masters)
			if err != nil {
				return codeError{ExitFailed, err}
			}
			if fold && yes {
				buckets := out.Buckets
				if buckets == 0 {
					buckets = redlock.DefaultFenceBuckets
				}
				var wg sync.WaitGroup
				errs := make([]error, len(out.Masters))
				for i, rc := range c.Clients() {
					if !out.Masters[i].Reachable || out.Masters[i].Legacy == 0 {
						continue
					}
					wg.Go(func() { out.Masters[i].Moved, errs[i] = restart.FoldLegacyCounters(ctx, rc, buckets) })
				}
				wg.Wait()
				out.Folded = true
				after := readCounters(ctx, c.URLs(), c.Clients())
				for i := range out.Masters {
					moved := out.Masters[i].Moved
					out.Masters[i] = after[i]
					out.Masters[i].Moved = moved
					if errs[i] != nil {
						out.Masters[i].Cause = errs[i].Error()
					}
				}
				out.Buckets = buckets
			}
			return a.printCounters(cmd.OutOrStdout(), out, fold)
		},
	}
	cmd.Flags().BoolVar(&fold, "fold", false, "fold per-key counters of an earlier version into their buckets (a dry run without --yes)")
	cmd.Flags().BoolVar(&yes, "yes", false, "act on --fold")
	return cmd
}

// readCounters reads every master's counter space in parallel.
func readCounters(ctx context.Context, urls []string, clients []redis.UniversalClient) []counterMaster {
	out := make([]counterMaster, len(clients))
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Go(func() {
			m := counterMaster{Master: i, URL: urls[i]}
			cs, err := restart.ReadCounterSpace(ctx, rc)
			if err != nil {
				m.Cause = probe.Cause(err) + ": " + err.Error()
			} else {
				m.Reachable, m.Buckets, m.Present, m.Legacy = true, cs.Buckets, cs.Present, cs.Legacy
			}
			out[i] = m
		})
	}
	wg.Wait()
	return out
}

// recordedBuckets is the bucket count the reachable masters record; masters
// that record none yet agree with any. Two different counts are an error
// (the clients refuse to lock then too).
func recordedBuckets(ms []counterMaster) (int, error) {
	b := 0
	for _, m := range ms {
		switch {
		case m.Buckets == 0:
		case b == 0:
			b = m.Buckets
		case m.Buckets != b:
			return 0, fmt.Errorf("the masters record different fence bucket counts (%d and %d): every client must use one (redlock.WithFenceBuckets)", b, m.Buckets)
		}
	}
	return b, nil
}

func (a *app) printCounters(w io.Writer, out countersJSON, fold bool) error {
	if a.g.json() {
		if err := writeJSON(w, out); err != nil {
			return err
		}
		return foldErr(out)
	}
	tw := table(w)
	fmt.Fprintln(tw, "#\tMASTER\tBUCKETS\tPRESENT\tPER-KEY LEFT\tFOLDED")
	legacy := 0
	for _, m := range out.Masters {
		if !m.Reachable {
			fmt.Fprintf(tw, "%d\t%s\t-\t-\t-\t-\t%s\n", m.Master, m.URL, m.Cause)
			continue
		}
		legacy += m.Legacy
		fmt.Fprintf(tw, "%d\t%s\t%s\t%d\t%d\t%d\t%s\n", m.Master, m.URL, bucketsCell(m.Buckets), m.Present, m.Legacy, m.Moved, m.Cause)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	switch {
	case legacy == 0:
		fmt.Fprintln(w, "no per-key counters of an earlier version: each master keeps at most one counter per bucket")
	case fold && !out.Folded:
		fmt.Fprintf(w, "--fold --yes would fold %d per-key counters into their buckets and delete them\n", legacy)
	default:
		fmt.Fprintf(w, "%d per-key counters of an earlier version left (each read at every lock of its key): redlockctl counters --fold --yes folds them into their buckets\n", legacy)
	}
	return foldErr(out)
}

func bucketsCell(b int) string {
	if b == 0 {
		return "none yet"
	}
	return fmt.Sprint(b)
}

// foldErr fails the command when a fold that ran failed on some master.
func foldErr(out countersJSON) error {
	if !out.Folded {
		return nil
	}
	for _, m := range out.Masters {
		if m.Reachable && m.Cause != "" {
			return codeError{ExitFailed, fmt.Errorf("fold on master %d: %s", m.Master, m.Cause)}
		}
	}
	return nil
}
