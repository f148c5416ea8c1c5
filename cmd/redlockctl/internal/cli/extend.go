package cli

import (
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/redlock"
)

func (a *app) newExtendCmd() *cobra.Command {
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:   "extend HANDLE --ttl D",
		Short: "Extend a lease taken by lock, by its handle; prints the renewed handle",
		Long: `extend renews the lease of HANDLE for --ttl on every master where the key still holds the
lease's value (it never recreates an expired or stolen key), and succeeds only if a majority agreed
within the new validity. It prints the renewed handle (its validity moved) to stdout.

Exit 5 when the lease is lost (its validity ended, or too many masters no longer hold it); nothing
is printed to stdout then. Exit 4 when too few masters answered: the masters that did renew keep the
key for the new --ttl only, so extend prints the handle with its validity moved to the earlier of
the old one and start + --ttl − drift (as the library's Lease.Extend does); use that handle from
then on, not the old one.`,
		Example: `  H=$(redlockctl extend "$H" --ttl 5m) || exit $?`,
		Args:    exactArgs(1, "HANDLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requiredPositive(cmd, "ttl", ttl); err != nil {
				return err
			}
			h, c, err := a.openHandle(cmd, args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			return a.extend(cmd, c, h, ttl, "extended")
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "new TTL (required, > 0)")
	return cmd
}

// extend renews the lease of h on c's masters for ttl and prints the new
// handle (extend, and sem refresh).
func (a *app) extend(cmd *cobra.Command, c *cluster.Cluster, h Handle, ttl time.Duration, verb string) error {
	nh, o, err := extendHandle(cmd.Context(), c, a.g.timeout, h, ttl)
	a.printRound(cmd, c.URLs(), o)
	switch {
	case err == nil:
		return a.printLease(cmd, verb, nh)
	case errors.Is(err, redlock.ErrLockLost):
		return err // dead: no handle to give
	}
	// Too few masters answered, but those that ran the PEXPIRE keep the key
	// for ttl only: the handle's validity moved (never later than before),
	// and the old handle must not be used any more.
	if perr := a.printLease(cmd, "could not extend", nh); perr != nil {
		return errors.Join(err, perr)
	}
	return err
}

// printRound names, on stderr, each master that did not agree.
func (a *app) printRound(cmd *cobra.Command, urls []string, o quorumOutcome) {
	for _, r := range o.results {
		switch r.Result {
		case "ok":
		case "not-owner":
			fmt.Fprintf(cmd.ErrOrStderr(), "  master %d (%s): the key is gone or held by another owner\n", r.Master, urls[r.Master])
		default:
			fmt.Fprintf(cmd.ErrOrStderr(), "  master %d (%s): %s\n", r.Master, urls[r.Master], r.Result)
		}
	}
}
