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

// SetLeaseTTL records the long lease's TTL asked of slot s.
func (f *fake) SetLeaseTTL(s int, ttl time.Duration) {
	f.log("lease ttl c%d %v", s, ttl)
	f.mu.Lock()
	defer f.mu.Unlock()
	f.leaseTTL[s] = ttl
}

// LambdaEntry answers as if one grant of ttl, at the first call for that
// TTL (since another was asked), wrote the entry (now + 2 ttl) on every master; for apartTTL, master
// 0's entry is a TTL later.
func (f *fake) LambdaEntry(_ context.Context, i int, ttl time.Duration) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if ttl == f.apartTTL {
		if i == 0 {
			return f.apartEntry.Add(ttl), true
		}
		if f.apartEntry.IsZero() {
			f.apartEntry = time.Now().Add(2 * ttl)
		}
		return f.apartEntry, true
	}
	if f.entry.IsZero() || ttl != f.entryTTL {
		f.entry, f.entryTTL = time.Now().Add(2*ttl), ttl
	}
	return f.entry, true
}

// When the majority's entries of the long TTL stay apart (a master of it
// recorded its entry a TTL late), restart-long asks a TTL a millisecond
// longer, whose entries start afresh, and completes its steps on it.
// Without the retry the step skips (no hold) and the test fails.
func TestRestartLongRetriesEntriesApart(t *testing.T) {
	const ttl = 20 * time.Millisecond
	long := generator.LongLeaseTTLs * ttl
	f := newFake(5)
	f.apartTTL = long
	rec := runRestartLong(t, f, ttl)
	f.mu.Lock()
	defer f.mu.Unlock()
	if i := slices.Index(f.calls, "lease ttl c2 "+(long+time.Millisecond).String()); i < 0 {
		t.Fatalf("the candidate never asked %v: %v", long+time.Millisecond, f.calls)
	}
	retried := false
	for _, e := range rec.Events() {
		retried = retried || e.F == history.Nemesis && strings.Contains(e.Value, "retried")
	}
	if !retried {
		t.Error("no retry event in the history")
	}
}

// A try whose candidate gets no hold on the confined majority in its window
// lifts the confinement and tries again with a TTL a millisecond longer,
// whose entries start afresh; the restart comes after that TTL's entries.
func TestRestartLongRetriesWithoutAHold(t *testing.T) {
	const ttl = 20 * time.Millisecond
	long := generator.LongLeaseTTLs * ttl
	f := newFake(5)
	f.noHoldTTL = long
	rec := runRestartLong(t, f, ttl)
	f.mu.Lock()
	defer f.mu.Unlock()
	callsInOrder(t, f.calls, "gate c2", "ungate", "lease ttl c2 "+(long+time.Millisecond).String(), "gate c2", "rejoin except c2", "kill m1")
	if !f.killedAt.After(f.entry) || f.entryTTL != long+time.Millisecond {
		t.Errorf("killed at %v, not after the entries of %v (%v, end %v)", f.killedAt, long+time.Millisecond, f.entryTTL, f.entry)
	}
	var retry, start string
	for _, e := range rec.Events() {
		switch {
		case e.F != history.Nemesis:
		case strings.Contains(e.Value, "retried"):
			retry = e.Value
		case strings.HasSuffix(e.Value, "restart-long start"):
			start = e.Key
		}
	}
	if !strings.Contains(retry, "no hold of "+long.String()) {
		t.Errorf("retry event %q; want it to name the failed hold of %v", retry, long)
	}
	if want := "m1 +" + (long + time.Millisecond).String(); start != want {
		t.Errorf("start event's key %q; want %q", start, want)
	}
}

// restart-long asks the long TTL of every slot, confines and gates the
// candidate only once the lambda entries are recorded, hands the long TTL
// back before the others are replaced, lifts the confinement before the
// master restarts empty, and the restart comes after the entries' end (the
// fake's entry, fixed at its first read).
func TestRestartLongOrder(t *testing.T) {
	const ttl = 20 * time.Millisecond
	f := newFake(5)
	runRestartLong(t, f, ttl)
	f.mu.Lock()
	defer f.mu.Unlock()
	if !f.killedAt.After(f.entry) {
		t.Errorf("killed at %v, not after the entries' end %v", f.killedAt, f.entry)
	}
	long := (generator.LongLeaseTTLs * ttl).String()
	callsInOrder(t, f.calls, "lease ttl c0 "+long, "lease ttl c2 0s", "lease ttl c2 "+long, "gate c2", "rejoin except c2", "gate c-1", "kill m1", "start(0) m1", "ungate")
}

// callsInOrder fails t unless calls holds want in that order, each the
// first match after the one before.
func callsInOrder(t *testing.T, calls []string, want ...string) {
	t.Helper()
	at := -1
	for _, w := range want {
		i := slices.Index(calls[at+1:], w)
		if i < 0 {
			t.Fatalf("%q not after %d in %v", w, at, calls)
		}
		at += 1 + i
	}
}

// runRestartLong runs one restart-long step on f (majority 0, 1, 2, master
// 1 restarted, candidate slot 2), checks that it healed and completed, and
// returns the history.
func runRestartLong(t *testing.T, f *fake, ttl time.Duration) *history.Recorder {
	t.Helper()
	sched := generator.Schedule{Steps: []generator.Step{{Fault: generator.RestartLong, Majority: []int{0, 1, 2},
		Masters: []int{1}, Slots: []int{2}, Delay: generator.LongLeaseTTLs * ttl, Hold: 5 * ttl, Settle: ttl}}}
	rec := history.NewRecorder()
	n := New(f, rec, 3, nil)
	if err := n.Run(context.Background(), sched); err != nil {
		t.Fatal(err)
	}
	f.healed(t)
	if n.Counts()[generator.RestartLong] != 1 {
		t.Fatalf("counts %v: the episode did not complete", n.Counts())
	}
	return rec
}
