package nemesis

import (
	"context"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// data-loss saves the snapshot and detaches the replica before the
// confinement, then hits each master its own way, records each loss and its
// stop, and never lets more than MaxLost distinct masters lose data within
// Window: the second step, planned at once, waits until the first step's
// loss has left the window.
func TestDataLossKeepsItsFaultModel(t *testing.T) {
	const window = 300 * time.Millisecond
	step := func(masters []int, kinds ...string) generator.Step {
		return generator.Step{Fault: generator.DataLoss, Majority: []int{0, 1, 2}, Masters: masters, Slots: []int{0},
			Hold: time.Second, Kinds: kinds, Offsets: make([]time.Duration, len(kinds)), MaxLost: 1, Window: window}
	}
	sched := generator.Schedule{Steps: []generator.Step{
		step([]int{0}, generator.LossSnapshot),
		step([]int{1}, generator.LossFailover),
		step([]int{2}, generator.LossRestart),
		step([]int{0}, generator.LossFlush),
	}}
	f := newFake(5)
	rec := history.NewRecorder()
	n := New(f, rec, 3, nil)
	if err := n.Run(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	f.healed(t)
	if err := history.Validate(rec.Events()); err != nil {
		t.Fatal(err)
	}
	var losses []history.Event
	stops := 0
	for _, e := range rec.Events() {
		switch e.Value {
		case "data-loss start":
			losses = append(losses, e)
		case "data-loss stop":
			stops++
		}
	}
	want := []string{"m0 snapshot", "m1 failover", "m2 restart", "m0 flush"}
	if len(losses) != len(want) || stops != len(want) {
		t.Fatalf("%d losses, %d stops: want %d of each", len(losses), stops, len(want))
	}
	for k, e := range losses {
		if e.Key != want[k] {
			t.Errorf("loss %d on %q, want %q", k, e.Key, want[k])
		}
		if k > 0 && time.Duration(e.TimeNS-losses[k-1].TimeNS) < window {
			t.Errorf("%s lost data %v after %s: two masters within the window %v", e.Key,
				time.Duration(e.TimeNS-losses[k-1].TimeNS), losses[k-1].Key, window)
		}
	}
	if c := n.Counts(); c[generator.DataLoss] != 4 || c["data-loss/snapshot"] != 1 || c["data-loss/failover"] != 1 {
		t.Errorf("counts %v", c)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	order := func(a, b string) {
		i, j := slices.Index(f.calls, a), slices.Index(f.calls, b)
		if i < 0 || j < 0 || i > j {
			t.Errorf("want %q before %q in %v", a, b, f.calls)
		}
	}
	order("snapshot m0", "start(2) m0") // backend.FromSnapshot
	order("detach m1", "failover m1")
	order("failover m1", "reset m1")
	order("kill m2", "start(0) m2")
	if !slices.ContainsFunc(f.calls, func(c string) bool { return strings.HasPrefix(c, "flush m0") }) {
		t.Errorf("no flush of m0 in %v", f.calls)
	}
}

// The same master may lose data again at once: the bound is on distinct
// masters.
func TestDataLossSameMasterNeedNotWait(t *testing.T) {
	n := New(newFake(3), history.NewRecorder(), 2, nil)
	n.lost[1] = time.Now()
	ctx, cancel := context.WithCancel(context.Background())
	cancel() // a wait would report false at once
	if !n.awaitWindow(ctx, 1, 1, time.Hour) {
		t.Fatal("m1 had to wait for its own earlier loss")
	}
	if n.awaitWindow(ctx, 2, 1, time.Hour) {
		t.Fatal("m2 lost data within the window of m1's loss with f = 1")
	}
	if !n.awaitWindow(ctx, 2, 2, time.Hour) {
		t.Fatal("m2 had to wait with f = 2 and one master lost")
	}
}
