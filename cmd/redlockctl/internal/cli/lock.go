package cli

import (
	"context"
	"errors"
	"fmt"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
	"io"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/redlock"
)

func (a *app) newLockCmd() *cobra.Command {
	var ttl, wait time.Duration
	cmd := &cobra.Command{
		Use:   "lock KEY --ttl D [--wait D]",
		Short: "Take a lock and print its lease handle (for extend and unlock)",
		Long: `lock takes KEY on a majority of masters for --ttl and prints a lease handle to stdout: the
key, the lock value, the fencing token and the validity deadline, encoded in one word (with -o json,
a JSON object that also carries it). Pass the handle to extend and unlock in later invocations.

The handle is a secret: whoever has it can extend or release the lock. It is printed only to
stdout; store it like a password. The lock is not extended automatically: extend it before its
validity ends, or use run.

Without --wait, one attempt is made (exit 3 when another owner holds the key, 4 without a
majority of masters); with --wait, lock retries until the lock is free or the wait is over.`,
		Example: `  H=$(redlockctl lock deploy:prod --ttl 5m) || exit $?
  ./deploy.sh
  redlockctl unlock "$H"`,
		Args: exactArgs(1, "KEY"),
		RunE: func(cmd *cobra.Command, args []string) error {
			if err := requiredPositive(cmd, "ttl", ttl); err != nil {
				return err
			}
			if wait < 0 {
				return usageError{fmt.Errorf("--wait %v: must not be negative", wait)}
			}
			c, locks, err := a.locker(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			defer locks.Close()
			lease, err := acquire(cmd.Context(), locks, args[0], ttl, wait)
			if err != nil {
				a.explain(cmd.ErrOrStderr(), err)
				return err
			}
			h, err := handleFor(lease, c)
			if err != nil {
				return err
			}
			return a.printLease(cmd, "locked", h)
		},
	}
	cmd.Flags().DurationVar(&ttl, "ttl", 0, "lock TTL (required, > 0)")
	cmd.Flags().DurationVar(&wait, "wait", 0, "wait up to this long for the lock (0: one attempt)")
	return cmd
}

// locker dials the masters and builds a redlock Client with the library's
// defaults (restart quarantine on).
func (a *app) locker(ctx context.Context) (*cluster.Cluster, *redlock.Client, error) {
	c, err := a.connect(ctx)
	if err != nil {
		return nil, nil, err
	}
	locks, err := redlock.New(c.Clients(), redlock.WithDataLossTolerance(a.g.tolerance))
	if err != nil {
		_ = c.Close()
		return nil, nil, err
	}
	return c, locks, nil
}

// acquire makes one attempt (wait 0) or waits up to wait.
func acquire(ctx context.Context, locks *redlock.Client, key string, ttl, wait time.Duration, opts ...redlock.LockOption) (*redlock.Lease, error) {
	if wait == 0 {
		return locks.TryLock(ctx, key, ttl, opts...)
	}
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	return locks.Lock(wctx, key, ttl, opts...)
}

// handleFor builds the handle of a lease the library just acquired on c's
// masters, from its State.
func handleFor(lease *redlock.Lease, c *cluster.Cluster) (Handle, error) {
	st, err := lease.State()
	if err != nil {
		return Handle{}, fmt.Errorf("lock %q: acquired, but the lease ended before its handle was written: %w", lease.Key(), err)
	}
	return Handle{
		Key: st.Key, Value: st.Value, Token: uint64(st.Token),
		ValidUntil: st.ValidUntil, TTLms: st.TTL.Milliseconds(), Masters: masterIDs(c),
	}, nil
}

// leaseJSON is the -o json output of lock and extend.
type leaseJSON struct {
	Key        string `json:"key"`
	Owner      string `json:"owner"`
	Token      uint64 `json:"token"`
	ValidUntil string `json:"valid_until"` // RFC 3339 with nanoseconds
	TTLms      int64  `json:"ttl_ms"`
	Handle     string `json:"handle"` // secret
}

// printLease prints the handle (the secret) to stdout only, and a summary
// without it to stderr.
func (a *app) printLease(cmd *cobra.Command, verb string, h Handle) error {
	owner := inspect.OwnerID(h.Value)
	fmt.Fprintf(cmd.ErrOrStderr(), "%s %q: owner %s, fencing token %d, valid until %s (TTL %v)\n",
		verb, h.Key, owner, h.Token, h.ValidUntil.Format(time.RFC3339Nano), time.Duration(h.TTLms)*time.Millisecond)
	if a.g.json() {
		return writeJSON(cmd.OutOrStdout(), leaseJSON{
			Key: h.Key, Owner: owner, Token: h.Token, ValidUntil: h.ValidUntil.Format(time.RFC3339Nano),
			TTLms: h.TTLms, Handle: h.Encode(),
		})
	}
	_, err := fmt.Fprintln(cmd.OutOrStdout(), h.Encode())
	return err
}

// explain prints what each master said about a failed lock operation.
func (a *app) explain(w io.Writer, err error) {
	for _, line := range inspect.MasterErrors(err) {
		fmt.Fprintln(w, "  "+line)
	}
}

// requiredPositive checks a required duration flag: "--NAME is required"
// when it was not given (rather than a complaint about a value nobody
// typed), else positive.
func requiredPositive(cmd *cobra.Command, name string, d time.Duration) error {
	if !cmd.Flags().Changed(name) {
		return usageError{fmt.Errorf("--%s is required (e.g. --%s 30s)", name, name)}
	}
	return positive("--"+name, d)
}

// requiredLimit checks --limit: required, at least 1.
func requiredLimit(cmd *cobra.Command, limit int) error {
	if !cmd.Flags().Changed("limit") {
		return usageError{errors.New("--limit is required (e.g. --limit 4): every user of a semaphore gives the same limit")}
	}
	if limit < 1 {
		return usageError{fmt.Errorf("--limit %d: must be at least 1", limit)}
	}
	return nil
}

func positive(flag string, d time.Duration) error {
	if d <= 0 {
		return usageError{fmt.Errorf("%s %v: must be positive (e.g. %s 30s)", flag, d, flag)}
	}
	return nil
}

// exactArgs is cobra.ExactArgs with a message naming the argument.
func exactArgs(n int, names string) cobra.PositionalArgs {
	return func(cmd *cobra.Command, args []string) error {
		if len(args) != n {
			return usageError{fmt.Errorf("%s takes %s (got %d arguments)", cmd.Name(), names, len(args))}
		}
		return nil
	}
}
