package suite

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// The stale-cache episode on real servers reaches its stale acquisition:
// the kept slot's process, the same one that held before the episode
// started (a long-lived client), starts no acquisition while two holds of
// other processes take the key past its last token; then its first
// acquisition is the episode's stale one, proposing a token at or below
// the newest. The defaults give it a token above the newest (tokens
// valid); the fast path counting q−1 masters gives it its stale proposal
// (jepsen-like mutants --only fastpath-q-1: tokens invalid).
func TestStaleCacheEpisodeReachesItsStaleAcquisition(t *testing.T) {
	const clients = 4
	res, err := Run(context.Background(), Config{Backend: Local, Workload: "set", Nemeses: []string{"stale-cache"},
		Time: 4 * time.Second, Clients: clients, Seed: 1})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	if res.Verdict != checker.Valid {
		t.Errorf("verdict %s: %s", res.Verdict, checker.Summary(res.Results))
	}
	ev := res.Events
	start, stale, slot := -1, -1, -1
	for i, e := range ev {
		switch {
		case e.F != history.Nemesis:
		case e.Value == "stale-cache start":
			start = i
		case strings.HasPrefix(e.Value, "stale-cache stale-lock c"):
			stale = i
			if _, err := fmt.Sscanf(strings.TrimPrefix(e.Value, "stale-cache stale-lock "), "c%d", &slot); err != nil {
				t.Fatal(err)
			}
		case strings.HasPrefix(e.Value, "stale-cache skipped") || strings.HasPrefix(e.Value, "stale-cache missed"):
			t.Fatalf("the episode did not complete: %q", e.Value)
		}
	}
	if start < 0 || stale < start {
		t.Fatalf("no stale acquisition after the start (start #%d, stale-lock #%d)", start, stale)
	}
	// The stale acquisition: the kept slot's last acquire ok before the event.
	var staleOK history.Event
	for i := stale - 1; i > start; i-- {
		if e := ev[i]; e.F == history.Acquire && e.Type == history.OK && e.Process%clients == slot {
			staleOK = e
			break
		}
	}
	if staleOK.Token == 0 {
		t.Fatalf("no acquire ok of slot %d between #%d and #%d", slot, start, stale)
	}
	p := staleOK.Process
	var before uint64 // p's last token before the start
	for _, e := range ev[:start] {
		if e.Process == p && e.F == history.Acquire && e.Type == history.OK {
			before = e.Token
		}
	}
	if before == 0 {
		t.Fatalf("process %d held nothing before the episode: not a long-lived client", p)
	}
	invokes, newest, others := 0, uint64(0), 0
	for _, e := range ev[start:stale] {
		switch {
		case e.F != history.Acquire:
		case e.Process == p && e.Type == history.Invoke:
			invokes++
		case e.Process != p && e.Type == history.OK:
			others++
			newest = max(newest, e.Token)
		}
	}
	switch {
	case invokes != 1:
		t.Errorf("process %d invoked %d acquisitions during the episode, want only its stale one", p, invokes)
	case others < 2 || newest <= before:
		t.Errorf("%d holds of others took the key to token %d, past process %d's %d? want two past it", others, newest, p, before)
	case staleOK.Token <= newest:
		t.Errorf("the stale acquisition got token %d, at or below the newest %d", staleOK.Token, newest)
	}
	t.Logf("process %d: token %d before, others to %d, then %d", p, before, newest, staleOK.Token)
}
