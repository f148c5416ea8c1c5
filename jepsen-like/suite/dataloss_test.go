package suite

import (
	"context"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// The data-loss runs: the register workload on five local masters, four
// clients, seed dataLossSeed, the data-loss nemesis with f = 1. Each run is
// bounded: its schedule has a few steps, and the test's context ends it
// after dataLossLimit.
const (
	dataLossSeed  = 18
	dataLossTime  = 20 * time.Second
	dataLossLimit = 90 * time.Second
)

func dataLossRun(t *testing.T, cfg Config) *Result {
	t.Helper()
	cfg.Backend, cfg.Workload, cfg.Nemeses, cfg.Time, cfg.Clients, cfg.Seed =
		Local, "register", []string{generator.DataLoss}, dataLossTime, 4, dataLossSeed
	ctx, cancel := context.WithTimeout(context.Background(), dataLossLimit)
	defer cancel()
	start := time.Now()
	res, err := Run(ctx, cfg)
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%v: %d acquisitions, faults %v: %s", time.Since(start).Round(time.Second), res.Acquired, res.Faults, checker.Summary(res.Results))
	if res.Faults[generator.DataLoss] == 0 || res.NemesisErrors != "" {
		t.Fatalf("data-loss injected %d times, errors %q: the run proves nothing", res.Faults[generator.DataLoss], res.NemesisErrors)
	}
	return res
}

func verdict(res *Result, name string) checker.Result {
	for _, r := range res.Results {
		if r.Checker == name {
			return r
		}
	}
	return checker.Result{}
}

// Plain Redlock (a majority, no quarantine, no fencing) under the data-loss
// nemesis: a master of the holder's bare majority loses the key, and a
// fresh client takes it with the two masters outside: two holders at once.
func TestDataLossBreaksPlainRedlock(t *testing.T) {
	res := dataLossRun(t, Config{NoQuarantine: true, NoFencing: true})
	if m := verdict(res, "mutex"); m.Verdict != checker.Invalid {
		t.Fatalf("mutex is %s under data loss with a majority quorum: %s", m.Verdict, m.Explanation)
	}
	if res.Quorum != 3 {
		t.Fatalf("quorum %d, want a majority of 5", res.Quorum)
	}
	losses, broken := 0, 0
	for _, l := range lossEvents(res.Events) {
		losses++
		holder, end := liveHold(res.Events, l.TimeNS)
		if holder >= 0 && secondHolder(res.Events, holder, l.TimeNS, end) {
			broken++
		}
	}
	t.Logf("%d of %d losses gave the key a second holder", broken, losses)
}

// secondHolder reports whether a process other than holder acquired the
// lock between from and to.
func secondHolder(events []history.Event, holder int, from, to int64) bool {
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.OK && e.Process != holder && e.TimeNS > from && e.TimeNS < to {
			return true
		}
	}
	return false
}

func lossEvents(events []history.Event) []history.Event {
	var out []history.Event
	for _, e := range events {
		if e.F == history.Nemesis && e.Value == generator.DataLoss+" start" {
			out = append(out, e)
		}
	}
	return out
}

// redlock.WithDataLossTolerance(1) on five masters (a quorum of 4, no
// quarantine) under the same nemesis and seed: every checker valid, with
// every kind of loss injected while a hold lived and a challenger trying
// to take the key after each loss, before that hold ended.
func TestDataLossTolerantQuorumHolds(t *testing.T) {
	res := dataLossRun(t, Config{DataLossTolerance: 1})
	if res.Verdict != checker.Valid {
		t.Fatalf("verdict %s with WithDataLossTolerance(1): %v", res.Verdict, res.Results)
	}
	if res.Quorum != 4 || !res.NoQuarantine {
		t.Fatalf("quorum %d, quarantine off %v: want 4 and true", res.Quorum, res.NoQuarantine)
	}
	for _, k := range generator.LossKinds {
		if res.Faults[generator.DataLoss+"/"+k] == 0 {
			t.Errorf("no master lost data by %s: %v", k, res.Faults)
		}
	}
	if reg := verdict(res, "fenced-register"); !strings.Contains(reg.Explanation, "write") {
		t.Errorf("the fenced register saw no write: %s", reg.Explanation)
	}
	losses, contested := 0, 0
	for _, l := range lossEvents(res.Events) {
		losses++
		holder, end := liveHold(res.Events, l.TimeNS)
		if holder < 0 {
			t.Errorf("%s lost data at %.3fs while no one held the lock", l.Key, float64(l.TimeNS)/1e9)
			continue
		}
		for _, e := range res.Events {
			if e.F == history.Acquire && e.Type == history.Invoke && e.Process != holder && e.TimeNS > l.TimeNS && e.TimeNS < end {
				contested++
				break
			}
		}
	}
	if contested == 0 {
		t.Errorf("no challenger tried the key after any of %d losses while the hold lived", losses)
	}
	t.Logf("%d losses during holds, %d of them contested", losses, contested)
}

// liveHold returns the process that held the lock at time ns and when its
// hold ended (release invoked, or validity over), or -1.
func liveHold(events []history.Event, ns int64) (int, int64) {
	for i, e := range events {
		if e.F != history.Acquire || e.Type != history.OK || e.TimeNS > ns {
			continue
		}
		end := e.ValidUntilNS
		for _, r := range events[i+1:] {
			if r.Process == e.Process && r.F == history.Release && r.Type == history.Invoke {
				end = min(end, r.TimeNS)
				break
			}
		}
		if end > ns {
			return e.Process, end
		}
	}
	return -1, 0
}
