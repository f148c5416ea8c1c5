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
	"github.com/quorumlock/quorumlock/jepsen-like/backend/local"
	"github.com/quorumlock/quorumlock/jepsen-like/report"
)

func newBackend(ctx context.Context, kind string, masters int, per backend.Persistence, shim string) (backend.Backend, error) {
	switch kind {
	case Local:
		return local.Start(ctx, local.Options{Masters: masters, Persistence: per, ClockShim: shim})
	default:
		return startDocker(ctx, masters, per)
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
	if r.NoQuarantine || r.NoFencing {
		title += " (plain Redlock)"
	}
	if err := report.Write(f, title, r.Events, r.Results); err != nil {
		_ = f.Close()
		return err
	}
	return f.Close()
}

// progress draws a bar on w until the returned stop is called.
func progress(w io.Writer, start, end time.Time) (stop func()) {
	if w == nil {
		return func() {}
	}
	done := make(chan struct{})
	finished := make(chan struct{})
	go func() {
		defer close(finished)
		t := time.NewTicker(250 * time.Millisecond)
		defer t.Stop()
		total := end.Sub(start)
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
