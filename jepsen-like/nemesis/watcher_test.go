package nemesis

import (
	"context"
	"fmt"
	"slices"
	"strconv"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

func TestWatcherOf(t *testing.T) {
	for _, c := range []struct{ holder, slots, want int }{
		{0, 4, 3}, {3, 4, 2}, {1, 3, 2}, {2, 3, 1}, {0, 2, -1}, {0, 1, -1},
	} {
		if got := watcherOf(c.holder, c.slots); got != c.want {
			t.Errorf("watcherOf(%d, %d) = %d, want %d", c.holder, c.slots, got, c.want)
		}
	}
}

// A data-loss episode keeps one process (the watcher, not the holder) from
// before the confinement's end until after the fault, and lets it go then.
func TestEpisodeKeepsAWatcherThroughTheLoss(t *testing.T) {
	const ttl = 20 * time.Millisecond
	sched := generator.Schedule{Steps: []generator.Step{{Fault: generator.Restart, Majority: []int{0, 1, 2},
		Masters: []int{1}, Slots: []int{0}, Hold: 5 * ttl, Settle: ttl}}}
	f := newFake(5)
	rec := history.NewRecorder()
	n := New(f, rec, 4, nil)
	if err := n.Run(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	f.healed(t)
	f.mu.Lock()
	calls := slices.Clone(f.calls)
	f.mu.Unlock()
	holder := -1
	for _, c := range calls {
		if _, err := fmt.Sscanf(c, "rejoin except c%d", &holder); err == nil {
			break
		}
	}
	w := watcherOf(holder, 4)
	at := -1
	for _, want := range []string{"keep c" + strconv.Itoa(w) + " true", "rejoin except c" + strconv.Itoa(holder), "kill m1", "keep c" + strconv.Itoa(w) + " false"} {
		i := slices.Index(calls, want)
		if i <= at {
			t.Fatalf("%q at %d, want it after %d in %v", want, i, at, calls)
		}
		at = i
	}
	found := false
	for _, e := range rec.Events() {
		found = found || e.Value == generator.Restart+" watcher" && e.Key == "c"+strconv.Itoa(w)
	}
	if !found {
		t.Error("no watcher event recorded")
	}
}
