package cli

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// errSemOneMaster: a permit on one master is a member of a sorted set, not a
// lease with a handle.
var errSemOneMaster = errors.New("sem acquire, release and refresh across invocations need several masters (each place is a Redlock slot with a handle); with one master, hold the permit inside a process with package redlock/semaphore")

func (a *app) newSemCmd() *cobra.Command {
	sem := &cobra.Command{
		Use:   "sem status|acquire|release|refresh NAME --limit N",
		Short: "Counting semaphores: up to --limit holders of NAME at once",
		Long: `sem operates the counting semaphores of package redlock/semaphore (its default variant, Atomic).
On several masters a semaphore of limit N is N Redlock slots: acquire takes a free slot and prints
its handle (a secret, to stdout only, like lock's), which release and refresh take in later
invocations. status counts the live holders. Every user of a semaphore must use the same NAME and
--limit.

Exit codes: 3 when all --limit places are held (busy), 4 without a majority of masters, 5 when the
permit is lost (release or refresh of a permit whose slot was lost or timed out).`,
		Example: `  redlockctl sem status exports --limit 4
  H=$(redlockctl sem acquire exports --limit 4 --ttl 30s) || exit $?
  redlockctl sem refresh exports "$H" --limit 4 --ttl 30s
  redlockctl sem release exports "$H" --limit 4`,
		Args: cobra.NoArgs,
	}
	sem.AddCommand(a.newSemStatusCmd(), a.newSemAcquireCmd(), a.newSemReleaseCmd(), a.newSemRefreshCmd())
	return sem
}

// openSemaphore dials the masters and builds the semaphore; done closes
// both.
func (a *app) openSemaphore(cmd *cobra.Command, name string, limit int, opts ...semaphore.Option) (done func(), _ *cluster.Cluster, _ *semaphore.Semaphore, _ error) {
	if err := requiredLimit(cmd, limit); err != nil {
		return nil, nil, nil, err
	}
	c, err := a.connect(cmd.Context())
	if err != nil {
		return nil, nil, nil, err
	}
	opts = append([]semaphore.Option{semaphore.WithLockOptions(redlock.WithDataLossTolerance(a.g.tolerance))}, opts...)
	s, err := semaphore.New(c.Clients(), name, limit, opts...)
	if err != nil {
		_ = c.Close()
		return nil, nil, nil, err
	}
	return func() { _ = s.Close(); _ = c.Close() }, c, s, nil
}

// semStatusJSON is the -o json output of sem status.
type semStatusJSON struct {
	Name    string `json:"name"`
	Limit   int    `json:"limit"`
	Holders int    `json:"holders"`
	Free    int    `json:"free"`
}

func (a *app) newSemStatusCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "status NAME --limit N",
		Short:   "Count the live holders of a semaphore",
		Example: `  redlockctl sem status exports --limit 4 -o json`,
		Args:    exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			done, _, s, err := a.openSemaphore(cmd, args[0], limit)
			if err != nil {
				return err
			}
			defer done()
			ctx, cancel := a.withTimeout(cmd.Context())
			defer cancel()
			n, err := s.Holders(ctx)
			if err != nil {
				return err
			}
			if a.g.json() {
				return writeJSON(cmd.OutOrStdout(), semStatusJSON{Name: args[0], Limit: limit, Holders: n, Free: max(limit-n, 0)})
			}
			_, err = fmt.Fprintf(cmd.OutOrStdout(), "%s: %d of %d places held, %d free\n", args[0], n, limit, max(limit-n, 0))
			return err
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "holders allowed at once (required, >= 1)")
	return cmd
}

func (a *app) newSemAcquireCmd() *cobra.Command {
	var limit int
	var ttl, wait time.Duration
	cmd := &cobra.Command{
		Use:   "acquire NAME --limit N [--ttl D] [--wait D]",
		Short: "Take a place and print its handle (for release and refresh)",
		Long: `acquire takes one of the --limit places of NAME for --ttl (the permit's timeout: it is lost unless
refreshed within it) and prints the place's handle to stdout. Without --wait it fails at once when
every place is held (exit 3); with --wait it waits for a release.`,
		Example: `  H=$(redlockctl sem acquire exports --limit 4 --ttl 30s --wait 1m) || exit $?`,
		Args:    exactArgs(1, "NAME"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := positive("--ttl", ttl); err != nil {
				return err
			}
			if wait < 0 {
				return usageError{fmt.Errorf("--wait %v: must not be negative", wait)}
			}
			if err := requiredLimit(cmd, limit); err != nil {
				return err
			}
			urls, err := a.masterURLs()
			if err != nil {
				return err
			}
			if len(urls) < 2 {
				return codeError{ExitFailed, errSemOneMaster}
			}
			done, c, s, err := a.openSemaphore(cmd, args[0], limit, semaphore.WithTimeout(ttl))
			if err != nil {
				return err
			}
			defer done()
			p, err := acquirePermit(cmd.Context(), s, wait)
			if err != nil {
				a.explain(cmd.ErrOrStderr(), err)
				return semExit(err)
			}
			key := semaphore.SlotKey(args[0], p.Slot())
			rctx, cancel := context.WithDeadline(cmd.Context(), p.ValidUntil())
			defer cancel()
			v, err := leaseValue(rctx, c, key)
			if err != nil {
				// Nobody could use the place without its handle: give it back.
				relctx, cancel := context.WithTimeout(context.WithoutCancel(cmd.Context()), a.g.timeout)
				defer cancel()
				return errors.Join(fmt.Errorf("sem acquire %q: took slot %d, but reading its value back failed: %w", args[0], p.Slot(), err), p.Release(relctx))
			}
			// The place is the handle's now: this process lets go of it
			// without giving it back.
			p.Detach()
			return a.printLease(cmd, fmt.Sprintf("took place %d of", p.Slot()), Handle{
				Key: key, Value: v, Token: uint64(p.Token()), ValidUntil: p.ValidUntil(),
				TTLms: ttl.Milliseconds(), Masters: masterIDs(c),
			})
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "holders allowed at once (required, >= 1)")
	cmd.Flags().DurationVar(&ttl, "ttl", semaphore.DefaultTimeout, "how long the place lives without refresh")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for a place (0: fail at once when busy)")
	return cmd
}

// acquirePermit makes one attempt (wait 0) or waits up to wait.
func acquirePermit(ctx context.Context, s *semaphore.Semaphore, wait time.Duration) (*semaphore.Permit, error) {
	if wait == 0 {
		return s.TryAcquire(ctx)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return s.Acquire(wctx)
}

// semExit maps a semaphore error to the exit codes: busy is "not acquired".
func semExit(err error) error {
	if errors.Is(err, semaphore.ErrBusy) {
		return codeError{ExitNotAcquired, err}
	}
	return err
}

// semHandle checks that HANDLE is a place of NAME with --limit places and
// dials the masters it was issued for.
func (a *app) semHandle(cmd *cobra.Command, name, arg string, limit int) (Handle, *cluster.Cluster, error) {
	if err := requiredLimit(cmd, limit); err != nil {
		return Handle{}, nil, err
	}
	h, c, err := a.openHandle(cmd, arg)
	if err != nil {
		return h, nil, err
	}
	for i := range limit {
		if h.Key == semaphore.SlotKey(name, i) {
			return h, c, nil
		}
	}
	_ = c.Close()
	return h, nil, usageError{fmt.Errorf("the handle is not a place of semaphore %q with --limit %d (it is for %q)", name, limit, h.Key)}
}

func (a *app) newSemReleaseCmd() *cobra.Command {
	var limit int
	cmd := &cobra.Command{
		Use:     "release NAME HANDLE --limit N",
		Short:   "Give a place back, by its handle",
		Example: `  redlockctl sem release exports "$H" --limit 4`,
		Args:    exactArgs(2, "NAME HANDLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			h, c, err := a.semHandle(cmd, args[0], args[1], limit)
			if err != nil {
				return err
			}
			defer c.Close()
			return a.unlock(cmd, c, h)
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "holders allowed at once (required, >= 1)")
	return cmd
}

func (a *app) newSemRefreshCmd() *cobra.Command {
	var limit int
	var ttl time.Duration
	cmd := &cobra.Command{
		Use:     "refresh NAME HANDLE --limit N [--ttl D]",
		Short:   "Keep a place for another --ttl, by its handle; prints the renewed handle",
		Long:    `refresh renews a place that is still held; it never takes back a place that was lost (exit 5).`,
		Example: `  H=$(redlockctl sem refresh exports "$H" --limit 4 --ttl 30s) || exit $?`,
		Args:    exactArgs(2, "NAME HANDLE"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := positive("--ttl", ttl); err != nil {
				return err
			}
			h, c, err := a.semHandle(cmd, args[0], args[1], limit)
			if err != nil {
				return err
			}
			defer c.Close()
			return a.extend(cmd, c, h, ttl, "refreshed a place of")
		},
	}
	cmd.Flags().IntVar(&limit, "limit", 0, "holders allowed at once (required, >= 1)")
	cmd.Flags().DurationVar(&ttl, "ttl", semaphore.DefaultTimeout, "how long the place lives from now without refresh")
	return cmd
}
