package cli

import (
	"context"
	"fmt"
	"io"
	"strconv"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/restart"
	"github.com/quorumlock/quorumlock/redlock"
)

// repairJSON is repair's -o json output.
type repairJSON struct {
	Masters   []repairMaster `json:"masters"`
	Highest   uint64         `json:"highest_counter"`
	Floor     uint64         `json:"floor"`
	WaitS     float64        `json:"wait_s"`
	Applied   bool           `json:"applied"`
	Certified []int          `json:"certified,omitempty"`
}

type repairMaster struct {
	Master    int    `json:"master"`
	URL       string `json:"url"`
	Reachable bool   `json:"reachable"`
	Certified bool   `json:"certified"`
	State     string `json:"state"`
}

func (a *app) newRepairCmd() *cobra.Command {
	var yes bool
	var wait time.Duration
	cmd := &cobra.Command{
		Use:   "repair",
		Short: "Bring locking back after more masters lost their data than the quorum survives (dry run unless --yes)",
		Long: `repair is the operator's way out when more masters lost their data at once than a majority quorum
survives (for example 3 of 5 masters without appendfsync always restarted empty): no rule can then
prove what the lost masters knew, so clients refuse to certify them by themselves, and status and
doctor say so.

repair reads every master's fencing counters, chooses a token floor above all of them and at least the
microseconds since 2026-01-01 on this machine's clock, and, with --yes, waits --wait (by default the
longest TTL the masters say a live lease may have: a lease taken before the loss may still be live),
then raises every reachable master's counters to the floor and certifies it. Every later token is
above every earlier one as long as this machine's clock is not behind (tokens grow by one per
acquisition, far slower than one per microsecond): docs/fencing.md, "Repair".

Without --yes it only says what it would do.`,
		Example: `  redlockctl repair                 # what would be done
  redlockctl repair --yes           # wait out the longest live TTL, then repair
  redlockctl repair --yes --wait 0  # every client is stopped: no lease can be live`,
		Args: cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			explicit := cmd.Flags().Changed("wait")
			if explicit && wait < 0 {
				return usageError{fmt.Errorf("--wait %v: must be 0 or more", wait)}
			}
			ctx := cmd.Context()
			cctx, cancel := a.withTimeout(ctx)
			c, err := a.connect(cctx)
			cancel()
			if err != nil {
				return err
			}
			defer c.Close()
			members := make([]restart.Member, len(c.Clients()))
			for i, rc := range c.Clients() {
				members[i] = restart.Member{Index: i, RDB: rc}
			}
			rctx, cancel := context.WithTimeout(ctx, a.g.timeout*10)
			defer cancel()
			out, buckets, err := a.repairPlan(rctx, c.URLs(), members)
			if err != nil {
				return err
			}
			if !explicit {
				wait = time.Duration(out.WaitS * float64(time.Second))
			}
			out.WaitS = wait.Seconds()
			if !yes {
				return a.printRepair(cmd.OutOrStdout(), out)
			}
			if wait > 0 {
				fmt.Fprintf(cmd.ErrOrStderr(), "waiting %v: a lease taken before the loss may still be live\n", wait)
				select {
				case <-time.After(wait):
				case <-ctx.Done():
					return ctx.Err()
				}
			}
			rctx, cancel = context.WithTimeout(ctx, a.g.timeout*10)
			defer cancel()
			_, all, err := restart.PlanRepair(rctx, members, buckets, time.Now()) // counters may have moved while waiting
			if err != nil {
				return err
			}
			out.Floor, out.Applied = uint64(all.Floor), true
			out.Certified, err = restart.Repair(rctx, reachable(members, out), all)
			if perr := a.printRepair(cmd.OutOrStdout(), out); perr != nil {
				return perr
			}
			return err
		},
	}
	cmd.Flags().BoolVar(&yes, "yes", false, "act: raise the counters and certify every reachable master (default: a dry run)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "how long to wait before acting (default: the longest live TTL the masters record; 0: every client is stopped, no lease can be live)")
	return cmd
}

// repairPlan reads the masters and says what a repair would do.
func (a *app) repairPlan(ctx context.Context, urls []string, members []restart.Member) (repairJSON, int, error) {
	buckets := redlock.DefaultFenceBuckets
	out := repairJSON{Masters: make([]repairMaster, len(members))}
	var longest time.Duration
	for i, m := range members {
		out.Masters[i] = repairMaster{Master: i, URL: urls[i]}
		info, err := probe.Master(ctx, m.RDB)
		if err != nil {
			out.Masters[i].State = fmt.Sprintf("unreachable (%s): %v", probe.Cause(err), err)
			continue
		}
		if n, err := strconv.Atoi(info.FenceBuckets); err == nil && n > 0 {
			buckets = n
		}
		longest = max(longest, info.Lambda)
		rm := &out.Masters[i]
		rm.Reachable, rm.Certified = true, info.Certified()
		if rm.Certified {
			rm.State = "certified"
		} else {
			rm.State = probe.Verdict{Kind: probe.Uncertified(info), Now: time.Now()}.String()
		}
	}
	plan, _, err := restart.PlanRepair(ctx, members, buckets, time.Now())
	if err != nil {
		return out, 0, err
	}
	out.Highest, out.Floor, out.WaitS = uint64(plan.Highest), uint64(plan.Floor), longest.Seconds()
	return out, buckets, nil
}

// reachable is the members the plan found reachable.
func reachable(members []restart.Member, out repairJSON) []restart.Member {
	var r []restart.Member
	for i, m := range out.Masters {
		if m.Reachable {
			r = append(r, members[i])
		}
	}
	return r
}

func (a *app) printRepair(w io.Writer, out repairJSON) error {
	if a.g.json() {
		return writeJSON(w, out)
	}
	tw := table(w)
	fmt.Fprintln(tw, "MASTER\tURL\tSTATE")
	for _, m := range out.Masters {
		fmt.Fprintf(tw, "%d\t%s\t%s\n", m.Master, m.URL, m.State)
	}
	if err := tw.Flush(); err != nil {
		return err
	}
	verb := "would raise"
	if out.Applied {
		verb = "raised"
	}
	fmt.Fprintf(w, "%s every reachable master's counters to the floor %d (highest counter read: %d, keys under %s)\n", verb, out.Floor, out.Highest, keys.Prefix)
	switch {
	case out.Applied:
		fmt.Fprintf(w, "certified masters %v\n", out.Certified)
	case out.WaitS > 0:
		fmt.Fprintf(w, "with --yes: waits %.1fs first (a lease may still be live), then certifies every reachable master\n", out.WaitS)
	default:
		fmt.Fprintln(w, "with --yes: certifies every reachable master at once")
	}
	return nil
}
