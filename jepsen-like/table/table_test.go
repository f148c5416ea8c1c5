package table

import (
	"context"
	"flag"
	"slices"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

var long = flag.Bool("long", false, "run every row for minutes with more clients")

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// TestTable runs every row of docs/jepsen-like.md's table in both columns
// with its committed seed on local redis-server processes, and asserts what
// the table says: the faults were injected, the expected checkers
// say invalid, everything else is valid, and with the defaults the fenced
// register is never broken. Two cells run at a time.
func TestTable(t *testing.T) {
	o := Options{}
	if *long {
		o.Clients, o.Scale = 10, 3*60e9
	}
	for _, row := range Rows {
		for ci, col := range row.Cols() {
			want := row.Plain
			if ci == 1 {
				want = row.Defaults
			}
			name := strings.ReplaceAll(row.Nemesis, ",", "+") + "/" + map[int]string{0: "plain", 1: "defaults"}[ci]
			if col.DataLossTolerance > 0 {
				name = strings.ReplaceAll(row.Nemesis, ",", "+") + "/tolerant"
			}
			t.Run(name, func(t *testing.T) {
				t.Parallel()
				cell, err := RunCell(context.Background(), o, row, col)
				if err != nil {
					t.Fatal(err)
				}
				assertCell(t, row, ci, want, cell)
			})
		}
	}
}

func assertCell(t *testing.T, row Row, col int, want []string, cell Cell) {
	t.Helper()
	res := cell.Result
	t.Logf("%s: %s; %d acquisitions, faults %v", row.Fault, cell.Text(row), res.Acquired, res.Faults)
	for _, n := range strings.Split(row.Nemesis, ",") {
		if res.Faults[n] == 0 {
			t.Errorf("%s was never injected (%s): the run proves nothing", n, res.NemesisErrors)
			for _, e := range res.Events {
				if e.F == history.Nemesis {
					t.Log(e)
				}
			}
		}
	}
	if res.NemesisErrors != "" {
		t.Errorf("nemesis errors: %s", res.NemesisErrors)
	}
	if res.Acquired == 0 {
		t.Error("no acquisition at all")
	}
	for _, r := range res.Results {
		switch {
		case slices.Contains(want, r.Checker) && r.Verdict != checker.Invalid:
			t.Errorf("%s is %s, the table says invalid: %s", r.Checker, r.Verdict, r.Explanation)
			logTimeline(t, res.Events) // why the fault found nothing this time
		case !slices.Contains(want, r.Checker) && r.Verdict != checker.Valid && !(col == 0 && len(want) > 0):
			// In a plain cell that is invalid anyway, a second checker may
			// find the same violation (e.g. tokens); elsewhere all are valid.
			t.Errorf("%s is %s, the table says valid: %s; proof: %v", r.Checker, r.Verdict, r.Explanation, r.Ops)
		}
		if col == 1 && r.Checker == "fenced-register" && r.Verdict != checker.Valid {
			t.Errorf("fenced-register is %s with the defaults and a fenced store: %s", r.Verdict, r.Explanation)
		}
	}
	if row.MajorityDown && cell.DuringMajorityDown != 0 {
		t.Errorf("%d acquisitions while a majority of masters was down", cell.DuringMajorityDown)
	}
}

// logTimeline logs the nemesis's events and every acquisition's outcome, in
// order, with their times: enough to see where a cell's expected violation
// did not happen.
func logTimeline(t *testing.T, events []history.Event) {
	t.Helper()
	for _, e := range events {
		if e.F == history.Nemesis || (e.F == history.Acquire && e.Type != history.Invoke) {
			t.Logf("%8.3fs p%d %s %s %s %s token %d valid until %.3fs", float64(e.TimeNS)/1e9, e.Process, e.Type, e.F,
				e.Key, e.Value, e.Token, float64(e.ValidUntilNS)/1e9)
		}
	}
}
