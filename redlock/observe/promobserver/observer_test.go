package promobserver

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/prometheus/client_golang/prometheus"
	"github.com/prometheus/client_golang/prometheus/testutil"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/redlock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

// synthetic is a stream of events as a Client would report them.
func synthetic() []redlock.Event {
	timeout := fmt.Errorf("%w", redlock.ErrMasterTimeout)
	return []redlock.Event{
		{Op: redlock.OpAcquire, Key: "invoice:1", Outcome: redlock.OutcomeOK, Latency: time.Millisecond, Attempts: 1,
			Masters: []redlock.MasterResult{{Master: 0}, {Master: 1}, {Master: 2, Err: timeout}}},
		{Op: redlock.OpAcquire, Key: "invoice:2", Outcome: redlock.OutcomeNotAcquired, Latency: 3 * time.Millisecond, Attempts: 4,
			Masters: []redlock.MasterResult{{Master: 0, Err: redlock.ErrHeldByOther}, {Master: 1, Err: redlock.ErrHeldByOther}, {Master: 2}}},
		{Op: redlock.OpExtend, Key: "invoice:1", Outcome: redlock.OutcomeOK, Latency: time.Millisecond, AutoExtend: true},
		{Op: redlock.OpLost, Key: "invoice:1", Outcome: redlock.OutcomeLost, Err: redlock.ErrLockLost},
		{Op: redlock.OpQuarantine, Outcome: redlock.OutcomeEntered, Reason: "restarted without appendfsync always",
			Masters: []redlock.MasterResult{{Master: 2, Err: redlock.ErrQuarantined}}},
		{Op: redlock.OpRelease, Key: "invoice:1", Outcome: redlock.OutcomeLost, Latency: 2 * time.Millisecond},
	}
}

func TestObserverCountsSyntheticEvents(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := New(reg)
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range synthetic() {
		o.Observe(context.Background(), e)
	}
	for _, tc := range []struct {
		c    prometheus.Collector
		want float64
	}{
		{o.ops.WithLabelValues("acquire", "ok"), 1},
		{o.ops.WithLabelValues("acquire", "not_acquired"), 1},
		{o.ops.WithLabelValues("lost", "lost"), 1},
		{o.ops.WithLabelValues("quarantine", "entered"), 1},
		{o.masters.WithLabelValues("acquire", "2", "timeout"), 1},
		{o.masters.WithLabelValues("acquire", "0", "held_by_other"), 1},
		{o.masters.WithLabelValues("quarantine", "2", "quarantined"), 1},
	} {
		if got := testutil.ToFloat64(tc.c); got != tc.want {
			t.Errorf("%v: %v, want %v", tc.c, got, tc.want)
		}
	}
	// Durations only for timed operations; no key names anywhere.
	if n := testutil.CollectAndCount(o.duration); n != 4 {
		t.Errorf("duration series: %d, want 4 (acquire ok/not_acquired, extend, release)", n)
	}
	mfs, _ := reg.Gather()
	for _, mf := range mfs {
		if strings.Contains(mf.String(), "invoice") {
			t.Fatalf("a key name reached the metrics: %s", mf.String())
		}
	}
}

func TestKeyLabelIsOptIn(t *testing.T) {
	reg := prometheus.NewRegistry()
	o, err := New(reg, WithKeyLabel(func(k string) string { before, _, _ := strings.Cut(k, ":"); return before }))
	if err != nil {
		t.Fatal(err)
	}
	for _, e := range synthetic() {
		o.Observe(context.Background(), e)
	}
	if got := testutil.ToFloat64(o.ops.WithLabelValues("acquire", "ok", "invoice")); got != 1 {
		t.Fatalf("acquire ok for key class invoice: %v", got)
	}
}

func TestNewRejectsBadInput(t *testing.T) {
	for _, tc := range []struct {
		reg  prometheus.Registerer
		opts []Option
	}{
		{nil, nil},
		{prometheus.NewRegistry(), []Option{nil}},
		{prometheus.NewRegistry(), []Option{WithBuckets(nil)}},
		{prometheus.NewRegistry(), []Option{WithKeyLabel(nil)}},
	} {
		if _, err := New(tc.reg, tc.opts...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("New(%v, %d options): %v, want ErrInvalidArgument", tc.reg, len(tc.opts), err)
		}
	}
	reg := prometheus.NewRegistry()
	if _, err := New(reg); err != nil {
		t.Fatal(err)
	}
	if _, err := New(reg); err == nil {
		t.Fatal("registering the metrics twice succeeded")
	}
}

func TestOutcomeAndKindMapping(t *testing.T) {
	for err, want := range map[error]redlock.Outcome{
		nil:                        redlock.OutcomeOK,
		redlock.ErrNoQuorum:        redlock.OutcomeNoQuorum,
		redlock.ErrNotAcquired:     redlock.OutcomeNotAcquired,
		redlock.ErrLockLost:        redlock.OutcomeLost,
		context.DeadlineExceeded:   redlock.OutcomeCanceled,
		redlock.ErrInvalidArgument: redlock.OutcomeInvalid,
		errors.New("boom"):         redlock.OutcomeError,
	} {
		if got := redlock.OutcomeOf(err); got != want {
			t.Errorf("OutcomeOf(%v) = %s, want %s", err, got, want)
		}
	}
	if k := (redlock.MasterResult{Err: fmt.Errorf("x: %w", redlock.ErrMasterBusy)}).Kind(); k != "busy" {
		t.Errorf("Kind of a busy master: %s", k)
	}
}

func BenchmarkObserve(b *testing.B) {
	o, err := New(prometheus.NewRegistry())
	if err != nil {
		b.Fatal(err)
	}
	e := synthetic()[0]
	ctx := context.Background()
	b.ReportAllocs()
	for b.Loop() {
		o.Observe(ctx, e)
	}
}
