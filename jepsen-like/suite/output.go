package suite

import (
	"context"
	"encoding/json"
	"fmt"
	"io"
	"os"
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
		return docker.Start(ctx, docker.Options{Masters: masters, Persistence: per})
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

func writeReport(path string, r *Result) error {
	f, err := os.Create(path)
	if err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	title := fmt.Sprintf("jepsen-like: %s workload, nemesis %s, seed %d, %s backend", r.Workload, strings.Join(r.Nemeses, ","), r.Seed, r.Backend)
	switch {
	case r.DataLossTolerance > 0:
		title += fmt.Sprintf(" (WithDataLossTolerance(%d): quorum %d)", r.DataLossTolerance, r.Quorum)
	case r.NoQuarantine || r.NoFencing:
		title += " (plain Redlock)"
	}
	if err := report.Write(f, title, r.Events, r.Results); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// progress draws a bar on w until the returned stop is called.
// The bar's total is the schedule's typical length (at least d): a guide,
// since episodes wait for holds.
func progress(w io.Writer, start time.Time, sched generator.Schedule, d time.Duration) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		var planned time.Duration
		for _, st := range sched.Steps {
			planned += st.After + st.Settle + st.Hold/2
		}
		total := max(d, planned)
		for {
			el := min(time.Since(start), total)
			n := int(40 * el / total)
			fmt.Fprintf(w, "\r[%s%s] %3d%% %5.1fs/%.0fs", strings.Repeat("#", n), strings.Repeat(".", 40-n), 100*el/total, el.Seconds(), total.Seconds())
			select {
			case <-done:
				fmt.Fprintln(w)
				return
			case <-t.C:
			}
		}
	}()
	return func() { close(done); <-finished }
}
