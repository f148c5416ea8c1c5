package report

import (
	"os"
	"testing"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
)

func TestDumpSample(t *testing.T) {
	dir := os.Getenv("REPORT_DUMP")
	if dir == "" {
		t.Skip()
	}
	ev := brokenRun()
	if os.Getenv("REPORT_LONG") != "" {
		ev = longRun(5*60e9, 10)
	}
	if err := WriteDir(dir, "sample", ev, checker.Run(ev)); err != nil {
		t.Fatal(err)
	}
}
