package nemesis

import (
	"context"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// slowFake finds no hold in its first `misses` waits (each ends with its
// context), then hands one out; its masters can attach replicas ahead.
type slowFake struct {
	*fake
	mu     sync.Mutex
	misses int
}

type attachMaster struct{ fakeMaster }

func (m attachMaster) AttachReplica(context.Context) error { m.f.log("attach m%d", m.i); return nil }

func newSlowFake(n, misses int) *slowFake {
	f := &slowFake{fake: newFake(n), misses: misses}
	for i, m := range f.masters {
		f.masters[i] = attachMaster{m.(fakeMaster)}
	}
	return f
}

func (f *slowFake) Backend() backend.Backend { return f }

func (f *slowFake) AwaitHold(ctx context.Context, mode HoldMode, settle time.Duration) (int, <-chan struct{}, bool) {
	f.mu.Lock()
	miss := f.misses > 0
	if miss {
		f.misses--
	}
	f.mu.Unlock()
	if miss {
		<-ctx.Done()
		return 0, nil, false
	}
	return f.fake.AwaitHold(ctx, mode, settle)
}

func (f *slowFake) count(what string) int {
	f.fake.mu.Lock()
	defer f.fake.mu.Unlock()
	n := 0
	for _, c := range f.calls {
		if c == what {
			n++
		}
	}
	return n
}

func failoverStep() generator.Step {
	ms := time.Millisecond
	return generator.Step{After: ms, Fault: generator.Failover, Masters: []int{2}, Majority: []int{0, 1, 2},
		Slots: []int{0}, Hold: 5 * ms, Settle: ms}
}

// An episode whose confined majority grants no hold at first confines
// again (up to ConfineTries) instead of skipping its fault; the failover's
// replica is attached by Prepare, before the run, and only detached in it.
func TestEpisodeConfinesAgainBeforeSkipping(t *testing.T) {
	// Each try waits twice (the candidate alone, then any slot): two
	// fruitless tries, then a hold.
	f := newSlowFake(5, 4)
	rec := history.NewRecorder()
	n := New(f, rec, 2, nil)
	sched := generator.Schedule{Steps: []generator.Step{failoverStep()}}
	if err := n.Prepare(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	if f.count("attach m2") != 1 || f.count("detach m2") != 0 {
		t.Fatalf("after Prepare: %v; want m2's replica attached, not detached", f.calls)
	}
	if err := n.Run(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	if got := n.Counts()[generator.Failover]; got != 1 {
		t.Errorf("failover injected %d times; want 1 (calls %v)", got, f.calls)
	}
	confines := 0
	for _, e := range rec.Events() {
		confines += boolInt(e.Value == "confine start")
		if strings.Contains(e.Value, "skipped") {
			t.Errorf("%s", e.Value)
		}
	}
	if confines != 3 {
		t.Errorf("%d confinements; want 3", confines)
	}
	if !slices.Contains(f.calls, "detach m2") || !slices.Contains(f.calls, "failover m2") {
		t.Errorf("calls %v: want m2 detached and failed over", f.calls)
	}
	f.healed(t)
}

// With no hold in any try, the fault is skipped (stats: unknown), not
// injected about nothing, and the clients are not left confined.
func TestEpisodeSkipsAfterItsTries(t *testing.T) {
	f := newSlowFake(5, 2*ConfineTries)
	rec := history.NewRecorder()
	n := New(f, rec, 2, nil)
	if err := n.Run(context.Background(), generator.Schedule{Steps: []generator.Step{failoverStep()}}); err != nil {
		t.Fatal(err)
	}
	if got := n.Counts()[generator.Failover]; got != 0 {
		t.Errorf("failover injected %d times with no hold", got)
	}
	skipped := false
	for _, e := range rec.Events() {
		skipped = skipped || e.Value == "failover skipped (no hold)"
	}
	if !skipped || slices.Contains(f.calls, "failover m2") {
		t.Errorf("calls %v: want the failover skipped", f.calls)
	}
	f.healed(t)
}

func boolInt(b bool) int {
	if b {
		return 1
	}
	return 0
}
