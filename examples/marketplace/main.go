package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "marketplace:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		duration = flag.Duration("duration", 3*time.Second, "length of each run")
		sizes    = flag.String("sizes", "1x1,5x5", "listers x buyers, comma-separated")
		items    = flag.Int("items", 50_000, "items in each lister's inventory at the start")
		ttl      = flag.Duration("ttl", 2*time.Second, "TTL of the market's locks")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	cfgs, err := configs(*sizes, *duration, *items, *ttl)
	if err != nil {
		return err
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	fmt.Fprintln(os.Stderr, "starting 5 redis-server masters (the market lives on the first)")
	c, err := clustertest.Launch(5, clustertest.NoPersistence)
	if err != nil {
		return err
	}
	defer c.Close()
	data, locks := dial(c)
	defer closeAll(data, locks)
	if err := waitOlderThan(ctx, c, *ttl); err != nil {
		return err
	}

	var rows []Result
	for i, cfg := range cfgs {
		prefix := fmt.Sprintf("mkt%d:", i)
		r, err := Run(ctx, data, locks, cfg, prefix, func(r Result) {
			fmt.Fprintf(os.Stderr, "\r%-40s %5.1fs  listed %8d  sold %8d  retries %9d ", r.label(), r.Window.Seconds(), r.Listed, r.Sold, r.Retries)
		})
		if err != nil {
			fmt.Fprintln(os.Stderr)
			return err
		}
		fmt.Fprintf(os.Stderr, "\r%-40s %5.1fs  listed %8d  sold %8d  retries %9d  %s\n", r.label(), r.Window.Seconds(), r.Listed, r.Sold, r.Retries, verdict(r))
		rows = append(rows, r)
	}
	fmt.Print(table(rows))
	for _, r := range rows {
		if r.Conservation != nil {
			return fmt.Errorf("%s: %w", r.label(), r.Conservation)
		}
	}
	return nil
}

func configs(sizes string, d time.Duration, items int, ttl time.Duration) ([]Config, error) {
	var out []Config
	for _, s := range strings.Split(sizes, ",") {
		l, b, ok := strings.Cut(s, "x")
		nl, err1 := strconv.Atoi(l)
		nb, err2 := strconv.Atoi(b)
		if !ok || err1 != nil || err2 != nil || nl < 1 || nb < 1 || nl > 64 || nb > 64 {
			return nil, fmt.Errorf("size %q is not LISTERSxBUYERS with 1 to 64 of each", s)
		}
		base := Config{Listers: nl, Buyers: nb, Duration: d, ItemsPerLister: items, MaxBuys: 10_000_000, TTL: ttl}
		out = append(out, with(base, Watch, 0))
		for _, mode := range []Mode{Coarse, Fine} {
			for _, masters := range []int{1, 5} {
				out = append(out, with(base, mode, masters))
			}
		}
	}
	if items < 1 || d <= 0 || ttl < 100*time.Millisecond {
		return nil, fmt.Errorf("items %d, duration %v, ttl %v: need items >= 1, duration > 0, ttl >= 100ms", items, d, ttl)
	}
	return out, nil
}

func with(c Config, m Mode, masters int) Config {
	c.Mode, c.LockMasters = m, masters
	return c
}

// dial returns the data client (the first master) and one lock client per
// master (the first is the data master itself, as in the book).
func dial(c *clustertest.Cluster) (*redis.Client, []redis.UniversalClient) {
	data := redis.NewClient(&redis.Options{Addr: c.Servers[0].Addr})
	locks := make([]redis.UniversalClient, len(c.Servers))
	for i, s := range c.Servers {
		locks[i] = redis.NewClient(&redis.Options{Addr: s.Addr})
	}
	return data, locks
}

func closeAll(data *redis.Client, locks []redis.UniversalClient) {
	_ = data.Close()
	for _, l := range locks {
		_ = l.Close()
	}
}

// waitOlderThan waits until every master has been up longer than d: a
// quorumlock Client counts a master younger than its TTL only in rounds
// that every master granted (restart quarantine, docs/safety.md).
func waitOlderThan(ctx context.Context, c *clustertest.Cluster, d time.Duration) error {
	deadline := time.Now().Add(d + 10*time.Second)
	for _, s := range c.Servers {
		rdb := redis.NewClient(&redis.Options{Addr: s.Addr})
		for {
			info, err := rdb.Info(ctx, "server").Result()
			if err != nil {
				_ = rdb.Close()
				return err
			}
			up := 0
			for line := range strings.SplitSeq(info, "\r\n") {
				if v, ok := strings.CutPrefix(line, "uptime_in_seconds:"); ok {
					up, _ = strconv.Atoi(v)
				}
			}
			if time.Duration(up)*time.Second > d {
				break
			}
			if time.Now().After(deadline) {
				_ = rdb.Close()
				return fmt.Errorf("master %s still younger than %v", s.Addr, d)
			}
			select {
			case <-ctx.Done():
				_ = rdb.Close()
				return ctx.Err()
			case <-time.After(200 * time.Millisecond):
			}
		}
		_ = rdb.Close()
	}
	return nil
}
