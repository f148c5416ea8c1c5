package table

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/suite"
)

// A row with its own second column names that column's flags in its cell;
// the others keep the header's configuration.
func TestMarkdownNamesTheRowsOwnColumn(t *testing.T) {
	var dl Row
	for _, r := range Rows {
		if r.Nemesis == "data-loss" {
			dl = r
		}
	}
	if dl.Second == nil || dl.Cols()[1].DataLossTolerance != 1 || dl.Cols()[0] != Columns[0] {
		t.Fatalf("data-loss row columns %+v: want plain Redlock, then WithDataLossTolerance(1)", dl.Cols())
	}
	faults := map[string]int{"data-loss": 4}
	plain := Cell{Result: &suite.Result{Faults: faults, Verdict: checker.Invalid, Results: []checker.Result{
		{Checker: "mutex", Verdict: checker.Invalid}, {Checker: "fenced-register", Verdict: checker.Valid}}}}
	tolerant := Cell{Result: &suite.Result{Faults: faults, Verdict: checker.Valid}}
	md := Markdown([]Row{dl}, [][]Cell{{plain, tolerant}})
	want := "| `data-loss` | 18 | `mutex` invalid, `fenced-register` valid | `--data-loss-tolerance 1`: valid |"
	if !strings.Contains(md, want) {
		t.Fatalf("markdown:\n%s\nwant a line with %s", md, want)
	}
	if got := Columns[0].Flags(); got != "--no-quarantine --no-fencing" {
		t.Fatalf("plain flags %q", got)
	}
}
