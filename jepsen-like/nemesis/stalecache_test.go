package nemesis

import (
	"context"
	"maps"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// The stale-cache episode's steps, in order: the slot is kept and alone
// locks once, then is benched; the others lock twice; then, the others
// idle and gated out, the slot is let go with the behind masters cut off
// from the others and the away masters from it; everything is healed
// after.
func TestStaleCacheStepsInOrder(t *testing.T) {
	st := generator.Step{Fault: generator.StaleCache, Slots: []int{2}, Masters: []int{0, 3}, Cut: [][]int{{1, 4}}, Hold: time.Second}
	f := newFake(5)
	rec := history.NewRecorder()
	n := New(f, rec, 3, nil)
	if err := n.Run(context.Background(), generator.Schedule{Steps: []generator.Step{st}}); err != nil {
		t.Fatal(err)
	}
	f.healed(t)
	if n.Counts()[generator.StaleCache] != 1 {
		t.Fatalf("counts %v", n.Counts())
	}
	f.mu.Lock()
	calls, atUnbench := slices.Clone(f.calls), f.atUnbench
	f.mu.Unlock()
	want := []string{"keep c2 true", "gate c2", "bench c2 true", "ungate", "gate c2", "bench c2 false", "ungate", "keep c2 false"}
	k := 0
	for _, c := range calls {
		if k < len(want) && c == want[k] {
			k++
		}
	}
	if k < len(want) {
		t.Errorf("calls %v: missing %q (in order: %v)", calls, want[k], want)
	}
	// At the stale acquisition: behind (0, 3) cut off from slots 0 and 1,
	// away (1, 4) from slot 2, nothing else.
	cut := map[string]bool{"0 0": true, "0 3": true, "1 0": true, "1 3": true, "2 1": true, "2 4": true}
	if !maps.Equal(atUnbench, cut) {
		t.Errorf("cut at the stale acquisition %v, want %v", slices.Sorted(maps.Keys(atUnbench)), slices.Sorted(maps.Keys(cut)))
	}
	var values []string
	for _, e := range rec.Events() {
		values = append(values, e.Value)
	}
	if got := strings.Join(values, "; "); got != "stale-cache start; stale-cache stale-lock c2 after c1, c1; stale-cache stop" {
		t.Errorf("events: %s", got)
	}
}
