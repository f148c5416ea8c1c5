package nemesis

import (
	"context"
	"fmt"
	"slices"
	"strings"
	"sync"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// fake records what the nemesis does to masters and clients.
type fake struct {
	mu      sync.Mutex
	calls   []string
	paused  map[int]bool
	down    map[int]bool
	netCut  map[int]bool // masters cut off the network
	cut     map[string]bool
	delayed map[string]bool
	masters []backend.Master
	// gated, candidate and benched say which slot AwaitHold's hold is by:
	// the candidate when gated, else the first slot not benched.
	gated     bool
	candidate int
	benched   map[int]bool
	kept      map[int]bool
	// atUnbench are the cut links when AwaitUnbench was called.
	atUnbench map[string]bool
	entry     time.Time // the lambda entry LambdaEntry reports
	// apartTTL is a TTL whose entry master 0 records a TTL later than the
	// others (it was not granting at the first grant): never aligned.
	apartTTL   time.Duration
	apartEntry time.Time
	entryTTL   time.Duration // the TTL entry is for
	// noHoldTTL is a TTL whose candidate gets no hold (a master of the
	// majority still in quarantine, say); leaseTTL is each slot's TTL.
	noHoldTTL time.Duration
	leaseTTL  map[int]time.Duration
	killedAt  time.Time // the last Kill
}

type fakeMaster struct {
	f *fake
	i int
}

func newFake(n int) *fake {
	f := &fake{paused: map[int]bool{}, down: map[int]bool{}, netCut: map[int]bool{}, cut: map[string]bool{}, delayed: map[string]bool{},
		benched: map[int]bool{}, kept: map[int]bool{}, leaseTTL: map[int]time.Duration{}}
	for i := range n {
		f.masters = append(f.masters, fakeMaster{f, i})
	}
	return f
}

func (f *fake) log(format string, args ...any) {
	f.mu.Lock()
	defer f.mu.Unlock()
	f.calls = append(f.calls, fmt.Sprintf(format, args...))
}

func (m fakeMaster) set(set map[int]bool, v bool, what string) error {
	m.f.mu.Lock()
	set[m.i] = v
	m.f.mu.Unlock()
	m.f.log("%s m%d", what, m.i)
	return nil
}
func (m fakeMaster) Name() string                 { return fmt.Sprintf("m%d", m.i) }
func (m fakeMaster) Addr() string                 { return "" }
func (m fakeMaster) Pause(context.Context) error  { return m.set(m.f.paused, true, "pause") }
func (m fakeMaster) Resume(context.Context) error { return m.set(m.f.paused, false, "resume") }
func (m fakeMaster) Kill(context.Context) error {
	m.f.mu.Lock()
	m.f.killedAt = time.Now()
	m.f.mu.Unlock()
	return m.set(m.f.down, true, "kill")
}
func (m fakeMaster) Flush(context.Context) error    { m.f.log("flush m%d", m.i); return nil }
func (m fakeMaster) Failover(context.Context) error { m.f.log("failover m%d", m.i); return nil }
func (m fakeMaster) DetachReplica(context.Context) error {
	m.f.log("detach m%d", m.i)
	return nil
}
func (m fakeMaster) Snapshot(context.Context) error { m.f.log("snapshot m%d", m.i); return nil }
func (m fakeMaster) Start(_ context.Context, p backend.Persistence) error {
	return m.set(m.f.down, false, fmt.Sprintf("start(%d)", p))
}
func (m fakeMaster) SetClockOffset(_ context.Context, d time.Duration) error {
	m.f.log("clock m%d %v", m.i, d)
	return nil
}

func (m fakeMaster) Disconnect(context.Context) error { return m.set(m.f.netCut, true, "disconnect") }
func (m fakeMaster) Reconnect(context.Context) error  { return m.set(m.f.netCut, false, "reconnect") }

func (f *fake) Masters() []backend.Master  { return f.masters }
func (f *fake) Heal(context.Context) error { return nil }
func (f *fake) Close() error               { return nil }
func (f *fake) Backend() backend.Backend   { return f }
func (f *fake) ResetMaster(i int)          { f.log("reset m%d", i) }
func (f *fake) Gate(c int) {
	f.log("gate c%d", c)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gated, f.candidate = true, c
}
func (f *fake) Ungate() {
	f.log("ungate")
	f.mu.Lock()
	defer f.mu.Unlock()
	f.gated = false
}
func (f *fake) Bench(s int, b bool) {
	f.log("bench c%d %v", s, b)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.benched[s] = b
}
func (f *fake) Keep(s int, k bool) {
	f.log("keep c%d %v", s, k)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.kept[s] = k
}
func (f *fake) AwaitIdle(context.Context, int) bool { return true }
func (f *fake) AwaitUnbench(ctx context.Context, s int, mode HoldMode) (int, <-chan struct{}, bool) {
	f.mu.Lock()
	f.atUnbench = map[string]bool{}
	for k, c := range f.cut {
		if c {
			f.atUnbench[k] = true
		}
	}
	f.mu.Unlock()
	f.Bench(s, false)
	return f.AwaitHold(ctx, mode, 0)
}
func (f *fake) Armed() { f.log("armed") }
func (f *fake) PauseAcquisition(s int) (<-chan struct{}, func()) {
	f.log("pause acquisition c%d", s)
	paused := make(chan struct{})
	close(paused)
	return paused, func() {}
}
func (f *fake) Rejoin(_ context.Context, except int, _, _ <-chan struct{}) {
	f.log("rejoin except c%d", except)
}
func (f *fake) SetCut(s int, masters []int, blocked bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range masters {
		f.cut[fmt.Sprint(s, m)] = blocked
	}
}
func (f *fake) SetRefused(s int, masters []int, refused bool) { f.SetCut(s, masters, refused) }
func (f *fake) SetReplyDelay(s int, masters []int, d time.Duration) {
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, m := range masters {
		f.delayed[fmt.Sprint(s, m)] = d > 0
	}
}

// AwaitHold hands out a hold that ends at once, of the gate's candidate,
// or of the first slot not benched (slot 1 when none is).
func (f *fake) AwaitHold(context.Context, HoldMode, time.Duration) (int, <-chan struct{}, bool) {
	ended := make(chan struct{})
	close(ended)
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.gated {
		if f.noHoldTTL != 0 && f.leaseTTL[f.candidate] == f.noHoldTTL {
			return 0, nil, false
		}
		return f.candidate, ended, true
	}
	for s := 1; s < 8; s++ {
		if !f.benched[s] {
			return s, ended, true
		}
	}
	return 1, ended, true
}

func (f *fake) healed(t *testing.T) {
	t.Helper()
	f.mu.Lock()
	defer f.mu.Unlock()
	for i, p := range f.paused {
		if p {
			t.Errorf("m%d left paused", i)
		}
	}
	for i, d := range f.down {
		if d {
			t.Errorf("m%d left down", i)
		}
	}
	for i, c := range f.netCut {
		if c {
			t.Errorf("m%d left off the network", i)
		}
	}
	for k, c := range f.cut {
		if c {
			t.Errorf("link %s left cut", k)
		}
	}
	for k, d := range f.delayed {
		if d {
			t.Errorf("link %s left slow", k)
		}
	}
	for s, b := range f.benched {
		if b {
			t.Errorf("c%d left benched", s)
		}
	}
	for s, k := range f.kept {
		if k {
			t.Errorf("c%d left kept", s)
		}
	}
	if f.gated {
		t.Error("left gated")
	}
}

// Every fault of a schedule is injected, recorded as start and stop, and
// healed; an episode hits its master only after the hold was found.
func TestEveryFaultHeals(t *testing.T) {
	sched, err := generator.Generate(generator.Config{Nemeses: generator.Names, Masters: 5, Clients: 3,
		Duration: time.Second, TTL: 20 * time.Millisecond, Seed: 3})
	if err != nil {
		t.Fatal(err)
	}
	f := newFake(5)
	rec := history.NewRecorder()
	n := New(f, rec, 3, nil)
	if err := n.Run(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	f.healed(t)
	for _, name := range generator.Names {
		if n.Counts()[name] == 0 {
			t.Errorf("%s not injected", name)
		}
	}
	starts, stops := 0, 0
	for _, e := range rec.Events() {
		switch {
		case strings.HasSuffix(e.Value, " start"):
			starts++
		case strings.HasSuffix(e.Value, " stop"):
			stops++
		}
	}
	if starts == 0 || starts != stops {
		t.Errorf("%d starts, %d stops", starts, stops)
	}
	if err := history.Validate(rec.Events()); err != nil {
		t.Fatal(err)
	}
	f.mu.Lock()
	defer f.mu.Unlock()
	for _, want := range []string{"detach m", "failover m", "flush m", "disconnect m", "rejoin except c", "ungate"} {
		if !slices.ContainsFunc(f.calls, func(c string) bool { return strings.HasPrefix(c, want) }) {
			t.Errorf("no %q among %v", want, f.calls)
		}
	}
}

// A run cancelled in the middle of a fault still heals it.
func TestCancelledRunHeals(t *testing.T) {
	sched := generator.Schedule{Steps: []generator.Step{
		{Fault: generator.Pause, Masters: []int{0, 1}, Hold: time.Hour},
	}}
	f := newFake(5)
	ctx, cancel := context.WithCancel(context.Background())
	done := make(chan error, 1)
	go func() { done <- New(f, history.NewRecorder(), 2, nil).Run(ctx, sched) }()
	for {
		f.mu.Lock()
		p := f.paused[1]
		f.mu.Unlock()
		if p {
			break
		}
		time.Sleep(time.Millisecond)
	}
	cancel()
	if err := <-done; err != nil {
		t.Fatal(err)
	}
	f.healed(t)
}
