package cli

import (
	"fmt"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
)

func (a *app) newUnlockCmd() *cobra.Command {
	cmd := &cobra.Command{
		Use:   "unlock HANDLE",
		Short: "Release a lease taken by lock, by its handle",
		Long: `unlock deletes the lease's key on every master where it still holds the lease's value (never
another owner's) and wakes the waiters. Exit 5 when the lease was already lost (its validity
ended, or too many masters no longer hold it); its keys are removed wherever they are still its.`,
		Example: `  redlockctl unlock "$H"`,
		Args:    exactArgs(1, "HANDLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, c, err := a.openHandle(cmd, args[0])
			if err != nil {
				return err
			}
			defer c.Close()
			return a.unlock(cmd, c, h)
		},
	}
	return cmd
}

// unlock releases the lease of h on c's masters and reports it (unlock, and
// sem release).
func (a *app) unlock(cmd *cobra.Command, c *cluster.Cluster, h Handle) error {
	o, err := releaseHandle(cmd.Context(), c, a.g.timeout, h)
	a.printRound(cmd, c.URLs(), o)
	if a.g.json() {
		if jerr := writeJSON(cmd.OutOrStdout(), unlockJSON{Key: h.Key, Owner: inspect.OwnerID(h.Value), Released: o.ok, Quorum: o.quorum, Masters: o.results}); jerr != nil {
			return jerr
		}
	}
	if err != nil {
		return err
	}
	fmt.Fprintf(cmd.ErrOrStderr(), "unlocked %q (owner %s) on %d of %d masters\n", h.Key, inspect.OwnerID(h.Value), o.ok, o.masters)
	return nil
}

// unlockJSON is unlock's -o json output.
type unlockJSON struct {
	Key      string         `json:"key"`
	Owner    string         `json:"owner"`
	Released int            `json:"released"` // masters where the key was deleted
	Quorum   int            `json:"quorum"`
	Masters  []masterResult `json:"masters"`
}

// openHandle parses a handle and dials the masters it was issued for.
func (a *app) openHandle(cmd *cobra.Command, arg string) (Handle, *cluster.Cluster, error) {
	h, err := ParseHandle(arg)
	if err != nil {
		return h, nil, usageError{err}
	}
	c, err := a.connect(cmd.Context()) // no I/O yet
	if err != nil {
		return h, nil, err
	}
	if err := h.sameMasters(masterIDs(c)); err != nil {
		_ = c.Close()
		return h, nil, usageError{err}
	}
	return h, c, nil
}
