package bench

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestSummaryTakesMediansAndSums(t *testing.T) {
	rep := func(n int, ops, client, servers, p99, mx float64, failed int) Row {
		return Row{Scenario: "uncontended-1", Library: Quorumlock, Rep: n, Ops: 100, OpsPerSec: ops, CPUClientUS: client,
			CPUServersUS: servers, AcqP99US: p99, AcqMaxUS: mx, Failed: failed, WindowS: 2, ShareMin: n, ShareMax: 10 * n}
	}
	rows := []Row{
		rep(1, 1000, 500, 400, 90, 900, 0),
		{Scenario: "uncontended-1", Library: Redsync, OpsPerSec: 7},
		rep(2, 3000, 300, 600, 70, 300, 1),
		rep(3, 2000, 400, 500, 80, 700, 2),
	}
	got := Summary(rows)
	if len(got) != 2 || got[0].Library != Quorumlock || got[1].Library != Redsync {
		t.Fatalf("Summary gave %d rows in order %v; want quorumlock then redsync", len(got), got)
	}
	s := got[0]
	if s.Repeats != 3 || s.Rep != 0 || s.OpsPerSec != 2000 || s.CPUClientUS != 400 || s.CPUServersUS != 500 || s.AcqP99US != 80 {
		t.Errorf("medians: %+v; want 3 repeats, 2000 ops/s, 400 + 500 µs, p99 80", s)
	}
	if s.AcqMaxUS != 900 || s.Ops != 300 || s.Failed != 3 || s.WindowS != 6 || s.ShareMin != 1 || s.ShareMax != 30 {
		t.Errorf("max, sums and widest shares: %+v; want max 900, 300 ops, 3 failed, 6 s, shares 1–30", s)
	}
	if got[1].OpsPerSec != 7 || got[1].Repeats != 0 {
		t.Errorf("a single repetition changed: %+v", got[1])
	}
	if even := Summary([]Row{rep(1, 1000, 0, 0, 0, 0, 0), rep(2, 2000, 0, 0, 0, 0, 0)}); even[0].OpsPerSec != 1500 {
		t.Errorf("median of two: %v, want 1500", even[0].OpsPerSec)
	}
}

func TestTargetsSaysWhatIsMetAndWhatIsNot(t *testing.T) {
	rows := []Row{
		{Scenario: "uncontended-1", Library: Quorumlock, Ops: 1, CPUClientUS: 400, CPUServersUS: 500},
		{Scenario: "uncontended-1", Library: QuorumlockLock, Ops: 1, CPUClientUS: 400, CPUServersUS: 400},
		{Scenario: "uncontended-1", Library: Redsync, Ops: 1, CPUClientUS: 500, CPUServersUS: 350},
		{Scenario: "hotkey-32", Library: Quorumlock, Ops: 1, OwnerChangesPerSec: 900, AcqP99US: 40_000},
		{Scenario: "hotkey-32", Library: QuorumlockLock, Ops: 1, OwnerChangesPerSec: 1000, AcqP99US: 30_000},
		{Scenario: "hotkey-32", Library: Redsync, Ops: 1, OwnerChangesPerSec: 100, AcqP99US: 700_000},
		{Scenario: "uncontended-16", Library: Quorumlock, Ops: 1, OpsPerSec: 1000},
		{Scenario: "stall1-defaults", Library: Quorumlock, Ops: 1, OpsPerSec: 950},
	}
	got := Targets(rows)
	for _, want := range []string{
		"| 1 goroutine: CPU per pair at most redsync's | 900 µs, 1.06x | **no** | 800 µs, 0.94x | yes |",
		"| 1 of 5 stalled: at least 90 % of healthy (16 goroutines) | 95 % | yes | – | |",
		"| hot key 32: at least 8x redsync's owner changes/s | 9.0x | yes | 10.0x | yes |",
		"| hot key 32: wait p99 at most 1/20 of redsync's | 40 ms, 1/17.5 | **no** | 30 ms, 1/23.3 | yes |",
	} {
		if !strings.Contains(got, want+"\n") {
			t.Errorf("targets table lacks\n%s\nin\n%s", want, got)
		}
	}
	if strings.Contains(got, "64 goroutines") || strings.Contains(got, "2 of 5") {
		t.Errorf("targets without rows were shown:\n%s", got)
	}
	if Targets(rows[:2]) != "" {
		t.Error("a targets table without redsync")
	}
}

// Repetitions take turns on real masters, and each has its own keys.
func TestRepeatTakesTurns(t *testing.T) {
	masters := clustertest.Start(t, 5)
	var order []string
	cfg := Config{Duration: 200 * time.Millisecond, Repeat: 2, Scenarios: []string{"uncontended-1"},
		Libraries: []string{QuorumlockLock, Redsync}}
	rows, err := Run(context.Background(), masters.Servers, cfg, func(r Row) { order = append(order, r.Library) })
	if err != nil {
		t.Fatal(err)
	}
	if want := []string{QuorumlockLock, Redsync, QuorumlockLock, Redsync}; strings.Join(order, ",") != strings.Join(want, ",") {
		t.Fatalf("order %v, want %v", order, want)
	}
	for i, r := range rows {
		if r.Rep != i/2+1 || r.Ops == 0 || r.Failed != 0 {
			t.Errorf("row %d: rep %d, %d ops, %d failed (%s); want rep %d and operations", i, r.Rep, r.Ops, r.Failed, r.FirstError, i/2+1)
		}
	}
	s := Summary(rows)
	if len(s) != 2 || s[0].Repeats != 2 || s[0].Ops != rows[0].Ops+rows[2].Ops {
		t.Errorf("summary %+v", s)
	}
}
