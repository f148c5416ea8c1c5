package cli

import (
	"context"
	"errors"
	"fmt"
	"io"
	"os"
	"sort"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/spf13/cobra"

	"github.com/quorumlock/quorumlock/redlock"
)

// benchMaxOps bounds a bench run in count as well as in time.
const benchMaxOps = 10_000_000

var errDemoFailed = errors.New("demo: a check failed")

// benchJSON is bench's -o json output.
type benchJSON struct {
	Concurrency int     `json:"concurrency"`
	DurationS   float64 `json:"duration_s"`
	Pairs       int64   `json:"pairs"`  // lock+unlock pairs completed
	Errors      int64   `json:"errors"` // failed pairs
	PerSecond   float64 `json:"pairs_per_second"`
	P50ms       float64 `json:"p50_ms"`
	P99ms       float64 `json:"p99_ms"`
	Maxms       float64 `json:"max_ms"`
}

func (a *app) newBenchCmd() *cobra.Command {
	var duration, ttl time.Duration
	var concurrency int
	cmd := &cobra.Command{
		Use:   "bench [--duration D] [--concurrency N]",
		Short: "Measure lock+unlock throughput and latency against the configured masters",
		Long: `bench runs --concurrency goroutines, each taking and releasing its own key (TryLock then Release,
fencing on) for --duration, with a live progress line on stderr when it is a terminal, then prints pairs per second and
the latency of a pair (p50, p99, max). Keys are "redlockctl-bench:<random>:<n>", unique to the run,
and released at the end; their fencing tokens come from the shared counter buckets, so no counter is left per key.`,
		Example: `  redlockctl bench --duration 10s --concurrency 64`,
		Args:    cobra.NoArgs,
		RunE: func(cmd *cobra.Command, _ []string) error {
			if err := positive("--duration", duration); err != nil {
				return err
			}
			if err := positive("--ttl", ttl); err != nil {
				return err
			}
			if concurrency < 1 || concurrency > 4096 {
				return usageError{fmt.Errorf("--concurrency %d: must be 1 to 4096", concurrency)}
			}
			c, locks, err := a.locker(cmd.Context())
			if err != nil {
				return err
			}
			defer c.Close()
			defer locks.Close()
			prefix := "redlockctl-bench:" + strconv.FormatInt(time.Now().UnixNano(), 36) + ":"
			res := bench(cmd.Context(), cmd.ErrOrStderr(), locks, prefix, concurrency, duration, ttl)
			if a.g.json() {
				err = writeJSON(cmd.OutOrStdout(), res)
			} else {
				_, err = fmt.Fprintf(cmd.OutOrStdout(), "%d lock+unlock pairs in %.1fs from %d goroutines: %.0f pairs/s; pair latency p50 %.2f ms, p99 %.2f ms, max %.2f ms; %d errors\n",
					res.Pairs, res.DurationS, res.Concurrency, res.PerSecond, res.P50ms, res.P99ms, res.Maxms, res.Errors)
			}
			if err != nil {
				return err
			}
			if res.Pairs == 0 {
				return codeError{ExitFailed, errors.New("bench: no lock+unlock pair succeeded (see `redlockctl status`)")}
			}
			return nil
		},
	}
	cmd.Flags().DurationVar(&duration, "duration", 5*time.Second, "how long to run")
	cmd.Flags().IntVar(&concurrency, "concurrency", 16, "goroutines, each with its own key")
	cmd.Flags().DurationVar(&ttl, "ttl", 10*time.Second, "TTL of each lock")
	return cmd
}

func bench(ctx context.Context, stderr io.Writer, locks *redlock.Client, prefix string, n int, d, ttl time.Duration) benchJSON {
	// Warm up: the client's first operation probes every master and
	// certifies a fresh cluster; attempts made meanwhile would not measure.
	wctx, cancel := context.WithTimeout(ctx, d)
	if l, err := locks.Lock(wctx, prefix+"warmup", ttl); err == nil {
		_ = l.Release(context.WithoutCancel(ctx))
	}
	cancel()
	// The workers stop starting pairs at the deadline, but finish the one
	// under way: an attempt cut short by a context leaves its keys to the
	// background cleanup, which the Client's Close abandons (they would
	// expire only by their TTL).
	deadline := time.Now().Add(d)
	more := func() bool { return ctx.Err() == nil && time.Now().Before(deadline) }
	var pairs, errs atomic.Int64
	var firstErr atomic.Pointer[error]
	lat := make([][]time.Duration, n)
	start := time.Now()
	var wg sync.WaitGroup
	for w := range n {
		wg.Go(func() {
			key := prefix + strconv.Itoa(w)
			for more() && pairs.Load()+errs.Load() < benchMaxOps {
				t := time.Now()
				l, err := locks.TryLock(ctx, key, ttl)
				if err == nil {
					err = l.Release(context.WithoutCancel(ctx))
				}
				if err != nil {
					if more() {
						errs.Add(1)
						firstErr.CompareAndSwap(nil, &err)
					}
					continue
				}
				lat[w] = append(lat[w], time.Since(t))
				pairs.Add(1)
			}
		})
	}
	done := make(chan struct{})
	var pw sync.WaitGroup
	progress := stderr
	if !isTerminal(stderr) {
		progress = io.Discard // the live line is for a person at a terminal, not for logs
	}
	pw.Go(func() {
		t := time.NewTicker(500 * time.Millisecond)
		defer t.Stop()
		for {
			select {
			case <-done:
				fmt.Fprint(progress, "\r\033[K")
				return
			case <-t.C:
				el := time.Since(start)
				fmt.Fprintf(progress, "\r\033[K%5.1fs/%v  %d pairs  %.0f/s  %d errors", el.Seconds(), d, pairs.Load(), float64(pairs.Load())/el.Seconds(), errs.Load())
			}
		}
	})
	wg.Wait()
	close(done)
	pw.Wait()
	el := time.Since(start)
	if e := firstErr.Load(); e != nil {
		fmt.Fprintf(stderr, "first error: %v\n", *e)
	}
	var all []time.Duration
	for _, l := range lat {
		all = append(all, l...)
	}
	sort.Slice(all, func(i, j int) bool { return all[i] < all[j] })
	q := func(p float64) float64 {
		if len(all) == 0 {
			return 0
		}
		return ms(all[min(len(all)-1, int(p*float64(len(all))))])
	}
	return benchJSON{
		Concurrency: n, DurationS: el.Seconds(), Pairs: pairs.Load(), Errors: errs.Load(),
		PerSecond: float64(pairs.Load()) / el.Seconds(), P50ms: q(0.50), P99ms: q(0.99), Maxms: q(1),
	}
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	st, err := f.Stat()
	return err == nil && st.Mode()&os.ModeCharDevice != 0
}
