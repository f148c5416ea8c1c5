package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"maps"
	"os"
	"slices"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/backend/docker"
	"github.com/quorumlock/quorumlock/jepsen-like/backend/local"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/report"
)

func newBackend(ctx context.Context, kind string, masters int, per backend.Persistence, shim string) (backend.Backend, error) {
	switch kind {
	case Local:
		return local.Start(ctx, local.Options{Masters: masters, Persistence: per, ClockShim: shim})
	default:
		return docker.Start(ctx, docker.Options{Masters: masters, Persistence: per, ClockShim: shim})
	}
}

func writeJSON(path string, v any) error {
	b, err := json.MarshalIndent(v, "", "  ")
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	if err := os.WriteFile(path, append(b, '\n'), 0o644); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	return nil
}

// writeReport writes dir/report.html and, for a register run,
// dir/register.html (porcupine's visualization).
func writeReport(dir string, r *Result) error {
	title := fmt.Sprintf("jepsen-like: %s workload, nemesis %s, seed %d, %s backend", r.Workload, strings.Join(r.Nemeses, ","), r.Seed, r.Backend)
	switch {
	case r.DataLossTolerance > 0:
		title += fmt.Sprintf(" (WithDataLossTolerance(%d): quorum %d)", r.DataLossTolerance, r.Quorum)
	case r.NoQuarantine || r.NoFencing:
		title += " (plain Redlock)"
	}
	return report.WriteDir(dir, title, r.Events, r.Results)
}

// progress reports the run's progress on w until the returned stop is
// called: a bar redrawn in place (\r) when w is a terminal, else a plain
// line at each quarter, so that CI logs get four lines, not a frame every
// 250 ms. The total is the schedule's typical length (at least d): a guide,
// since episodes wait for holds.
func progress(w io.Writer, start time.Time, sched generator.Schedule, d time.Duration) (stop func()) {
	if w == nil {
		return func() {}
	}
	var planned time.Duration
	for _, st := range sched.Steps {
		planned += st.After + st.Settle + st.Hold/2
	}
	total := max(d, planned)
	tty := isTerminal(w)
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		quarter := 0 // the last quarter reported, without a terminal
		for {
			el := min(time.Since(start), total)
			switch q := int(4 * el / total); {
			case tty:
				n := int(40 * el / total)
				fmt.Fprintf(w, "\r[%s%s] %3d%% %5.1fs/%.0fs", strings.Repeat("#", n), strings.Repeat(".", 40-n), 100*el/total, el.Seconds(), total.Seconds())
			case q > quarter:
				quarter = q
				fmt.Fprintf(w, "progress: %d%% (%.0fs of about %.0fs)\n", 25*q, el.Seconds(), total.Seconds())
			}
			select {
			case <-done:
				if tty {
					fmt.Fprintln(w)
				}
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}

// isTerminal reports whether w is a character device (a terminal).
func isTerminal(w io.Writer) bool {
	f, ok := w.(*os.File)
	if !ok {
		return false
	}
	fi, err := f.Stat()
	return err == nil && fi.Mode()&os.ModeCharDevice != 0
}

// FaultCounts says how many faults of each kind were injected, sorted by
// kind: "flush 1, restart 2" ("none" for none).
func FaultCounts(faults map[string]int) string {
	if len(faults) == 0 {
		return "none"
	}
	kinds := slices.Sorted(maps.Keys(faults))
	parts := make([]string, len(kinds))
	for i, k := range kinds {
		parts[i] = fmt.Sprintf("%s %d", k, faults[k])
	}
	return strings.Join(parts, ", ")
}
