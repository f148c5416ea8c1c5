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

// The bucket loads' keys share the workload key's fence bucket, as the
// history records it.
func TestBucketSiblingsShareTheWorkloadKeysBucket(t *testing.T) {
	sib := bucketSiblings(workloadKey, 4)
	if len(sib) != 4 {
		t.Fatalf("%d siblings, want 4", len(sib))
	}
	for _, k := range sib {
		if k == workloadKey || bucketLabel(k) != bucketLabel(workloadKey) {
			t.Fatalf("sibling %q: bucket %s, the workload key's %s", k, bucketLabel(k), bucketLabel(workloadKey))
		}
	}
}
