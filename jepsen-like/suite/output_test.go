package suite

import (
	"bytes"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// Written to something that is not a terminal (a CI log), progress gives
// plain lines, one per quarter at most, and never a carriage return.
func TestProgressWithoutATerminalWritesPlainLines(t *testing.T) {
	var buf bytes.Buffer
	start := time.Now().Add(-time.Hour) // the whole run is behind: every quarter is due
	// The first report is written before stop is looked at: no waiting needed.
	stop := progress(&buf, start, generator.Schedule{}, time.Second)
	stop()
	out := buf.String()
	if strings.Contains(out, "\r") {
		t.Fatalf("progress wrote a carriage return to a non-terminal: %q", out)
	}
	if !strings.Contains(out, "progress: 100%") || strings.Count(out, "\n") != 1 {
		t.Fatalf("progress to a non-terminal: %q; want one plain line at 100%%", out)
	}
}

func TestFaultCountsReadsAsWords(t *testing.T) {
	if got := FaultCounts(map[string]int{"restart": 2, "flush": 1}); got != "flush 1, restart 2" {
		t.Fatalf("FaultCounts = %q", got)
	}
	if got := FaultCounts(nil); got != "none" {
		t.Fatalf("FaultCounts(nil) = %q", got)
	}
}
