// Command lockbench starts five local redis-server masters and measures
// quorumlock beside redsync, redislock and a raw SET NX floor on them, in
// one process and one run. From the repository root:
//
//	cd bench && go run ./cmd/lockbench [--duration 2s] [--quick] [--json FILE]
//
// It prints a progress line per scenario and library on stderr and a
// markdown table on stdout; --json writes one JSON line per result;
// --cpuprofile a CPU profile (e.g. --libraries quorumlock --scenarios
// uncontended-64 --cpuprofile /tmp/cpu.out, then go tool pprof).
package main

import (
	"context"
	"flag"
	"fmt"
	"os"
	"os/signal"
	"runtime/pprof"
	"strings"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/bench"
	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func main() {
	if err := run(); err != nil {
		fmt.Fprintln(os.Stderr, "lockbench:", err)
		os.Exit(1)
	}
}

func run() error {
	var (
		duration  = flag.Duration("duration", 2*time.Second, "measuring window of each scenario and library")
		quick     = flag.Bool("quick", false, "a smoke run: 300ms windows unless --duration is given")
		jsonPath  = flag.String("json", "", "write one JSON line per result to this file")
		libraries = flag.String("libraries", "", "comma-separated libraries (default all: "+strings.Join(bench.Libraries, ",")+")")
		scenarios = flag.String("scenarios", "", "comma-separated scenarios (default all)")
		ttl       = flag.Duration("ttl", 10*time.Second, "TTL of every lock")
		maxOps    = flag.Int("max-ops", 2_000_000, "end a window early after this many operations")
		repeat    = flag.Int("repeat", 1, "run every library this many times per scenario, taking turns; the tables show medians")
		masters   = flag.Int("masters", 5, "redis-server masters to start")
		cpuprof   = flag.String("cpuprofile", "", "write a CPU profile of the measured runs to this file (narrow it with --libraries and --scenarios)")
	)
	flag.Parse()
	if flag.NArg() > 0 {
		return fmt.Errorf("unexpected arguments %q", flag.Args())
	}
	cfg := bench.Config{
		Duration: *duration, TTL: *ttl, MaxOps: *maxOps, Repeat: *repeat,
		Libraries: split(*libraries), Scenarios: split(*scenarios),
		Progress: func(s string) { fmt.Fprintln(os.Stderr, s) },
	}
	if *quick && !flagSet("duration") {
		cfg.Duration = 300 * time.Millisecond
	}
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	defer stop()

	var emit func(bench.Row)
	if *jsonPath != "" {
		f, err := os.Create(*jsonPath)
		if err != nil {
			return err
		}
		defer f.Close()
		var werr error
		emit = func(r bench.Row) {
			if err := bench.WriteJSON(f, r); err != nil && werr == nil {
				werr = err
				fmt.Fprintln(os.Stderr, "lockbench: writing", *jsonPath+":", err)
			}
		}
	}

	fmt.Fprintf(os.Stderr, "starting %d redis-server masters\n", *masters)
	c, err := clustertest.Launch(*masters, clustertest.NoPersistence)
	if err != nil {
		return err
	}
	defer c.Close()
	if *cpuprof != "" {
		f, err := os.Create(*cpuprof)
		if err != nil {
			return err
		}
		defer f.Close()
		if err := pprof.StartCPUProfile(f); err != nil {
			return err
		}
		defer pprof.StopCPUProfile()
	}
	start := time.Now()
	rows, err := bench.Run(ctx, c.Servers, cfg, emit)
	summary := bench.Summary(rows)
	if *repeat > 1 {
		fmt.Printf("Medians of %d repetitions per scenario and library, taking turns (every repetition is in --json).\n\n", *repeat)
	}
	fmt.Print(bench.Markdown(summary))
	if t := bench.Targets(summary); t != "" {
		fmt.Print("\nIssue 19's targets, against redsync in this run:\n\n" + t)
	}
	fmt.Fprintf(os.Stderr, "%d results in %v\n", len(rows), time.Since(start).Round(time.Second))
	return err
}

func split(s string) []string {
	if s == "" {
		return nil
	}
	return strings.Split(s, ",")
}

func flagSet(name string) bool {
	set := false
	flag.Visit(func(f *flag.Flag) { set = set || f.Name == name })
	return set
}
