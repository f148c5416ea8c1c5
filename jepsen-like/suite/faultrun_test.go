package suite

import (
	"context"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// runFaultValid runs one fault on local servers with the defaults, set
// workload, 4 clients and seed 1 for d (bounded by 90 s), and fails the
// test unless the fault was injected without nemesis errors and every
// checker said valid.
func runFaultValid(t *testing.T, fault string, d time.Duration) *Result {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 90*time.Second)
	defer cancel()
	res, err := Run(ctx, Config{Backend: Local, Workload: "set", Nemeses: []string{fault}, Time: d, Clients: 4, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	if res.Faults[fault] == 0 || res.NemesisErrors != "" {
		for _, e := range res.Events {
			if e.F == history.Nemesis {
				t.Logf("%.3fs nemesis %s: %s", float64(e.TimeNS)/1e9, e.Key, e.Value)
			}
		}
		t.Fatalf("%s injected %d times, errors %q", fault, res.Faults[fault], res.NemesisErrors)
	}
	if res.Verdict != checker.Valid {
		t.Fatalf("verdict %s with the defaults: %s", res.Verdict, checker.Summary(res.Results))
	}
	return res
}
