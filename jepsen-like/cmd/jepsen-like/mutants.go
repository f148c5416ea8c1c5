package main

import (
	"fmt"
	"strings"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/jepsen-like/mutants"
)

func mutantsCmd() *cobra.Command {
	o := mutants.Options{}
	var only, out string
	var bucketKeys int
	cmd := &cobra.Command{
		Use:   "mutants",
		Short: "Build the library with each deliberate bug, run the default fault mix against each, print which checker killed which; exit 0 every mutant killed, 1 one survived",
		Args:  cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if only != "" {
				o.Only = strings.Split(only, ",")
			}
			if _, err := mutants.Select(o.Only); err != nil {
				return usageError{err}
			}
			if o.Budget < 0 || o.Time < 0 {
				return usageError{fmt.Errorf("--time and --budget must not be negative")}
			}
			o.BucketKeys = bucketKeys
			if bucketKeys == 0 {
				o.BucketKeys = -1 // none
			}
			o.Log = cmd.ErrOrStderr()
			outs, err := mutants.Run(cmd.Context(), o)
			md := mutants.Table(outs)
			fmt.Fprint(cmd.OutOrStdout(), md)
			if err != nil {
				return err
			}
			if out != "" {
				if err := mutants.Replace(out, md); err != nil {
					return err
				}
			}
			for _, x := range outs {
				if x.Control && x.Verdict != "valid" {
					return fmt.Errorf("the control (the code as it is) is %s, not valid: the table measures nothing", x.Verdict)
				}
				if !x.Control && !x.Killed() {
					return exitError{1}
				}
			}
			return nil
		},
	}
	f := cmd.Flags()
	f.StringVar(&o.Nemesis, "nemesis", mutants.DefaultNemesis, "the fault mix of every run")
	f.StringVar(&o.Workload, "workload", mutants.DefaultWorkload, "the workload of every run")
	f.DurationVar(&o.Time, "time", 20*time.Second, "each run's --time")
	f.DurationVar(&o.Budget, "budget", 240*time.Second, "each run's time limit (the build not counted)")
	f.Uint64Var(&o.Seed, "seed", 1, "the seed of every run")
	f.IntVar(&o.Clients, "clients", 4, "client slots of every run")
	f.IntVar(&bucketKeys, "bucket-keys", mutants.DefaultBucketKeys, "each run's --bucket-keys (0: none)")
	f.StringVar(&only, "only", "", "comma-separated mutant names (default all)")
	f.StringVar(&out, "out", "", "markdown file whose mutation table (between its markers) is replaced")
	return cmd
}
