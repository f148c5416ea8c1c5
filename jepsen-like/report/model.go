package report

import (
	"fmt"
	"slices"
	"sort"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// op is a client operation: an invoke and its completion (an invoke left
// open ends at the end of the run, as info).
type op struct {
	process    int
	f          history.F
	typ        history.Type
	from, to   int64
	inv, compl history.Event
	open       bool
}

// fault is a nemesis fault from its start to its stop event.
type fault struct {
	kind, target      string
	from, to          int64
	startIdx, stopIdx int
	healed            bool
}

func (f fault) label() string { return strings.TrimSpace(f.kind + " " + f.target) }

func (f fault) tip() string {
	s := fmt.Sprintf("%s %.3fs–%.3fs", f.label(), sec(f.from), sec(f.to))
	if !f.healed {
		s += " (not healed before the end)"
	}
	return s
}

// run is what the report draws, taken from the history once.
type run struct {
	events []history.Event
	end    int64 // the latest time or deadline
	ops    []op
	holds  []checker.Hold
	faults []fault
	kinds  []string // fault kinds present, in generator.Names order
	proof  map[int]bool
	// overlaps are every mutex overlap the results list.
	overlaps []checker.Overlap
}

func newRun(events []history.Event, results []checker.Result) *run {
	r := &run{events: events, end: 1, proof: make(map[int]bool)}
	for _, res := range results {
		for _, e := range res.Ops {
			r.proof[e.Index] = true
		}
		for _, o := range res.Overlaps {
			r.overlaps = append(r.overlaps, o)
			for _, e := range o.Ops {
				r.proof[e.Index] = true
			}
		}
	}
	open := make(map[int]history.Event)
	started := make(map[string]history.Event)
	for _, e := range events {
		r.end = max(r.end, e.TimeNS, e.ValidUntilNS)
		if e.Process == history.NemesisProcess {
			r.nemesis(e, started)
			continue
		}
		if e.Type == history.Invoke {
			open[e.Process] = e
			continue
		}
		if inv, ok := open[e.Process]; ok {
			delete(open, e.Process)
			r.ops = append(r.ops, op{process: e.Process, f: e.F, typ: e.Type, from: inv.TimeNS, to: e.TimeNS, inv: inv, compl: e})
		}
	}
	for _, inv := range open {
		r.ops = append(r.ops, op{process: inv.Process, f: inv.F, typ: history.Info, from: inv.TimeNS, to: r.end, inv: inv, open: true})
	}
	for _, s := range started {
		kind, _, _ := strings.Cut(s.Value, " ")
		r.faults = append(r.faults, fault{kind: kind, target: s.Key, from: s.TimeNS, to: r.end, startIdx: s.Index, stopIdx: len(events) - 1})
	}
	sort.SliceStable(r.ops, func(i, j int) bool { return r.ops[i].inv.Index < r.ops[j].inv.Index })
	sort.SliceStable(r.faults, func(i, j int) bool { return r.faults[i].startIdx < r.faults[j].startIdx })
	r.holds = checker.Holds(events)
	seen := make(map[string]bool)
	for _, f := range r.faults {
		seen[f.kind] = true
	}
	for _, k := range append(slices.Clone(generator.Names), "confine") {
		if seen[k] {
			r.kinds = append(r.kinds, k)
			delete(seen, k)
		}
	}
	rest := make([]string, 0, len(seen))
	for k := range seen {
		rest = append(rest, k)
	}
	sort.Strings(rest)
	r.kinds = append(r.kinds, rest...)
	return r
}

// nemesis pairs "<fault> start" and "<fault> stop" events of one target.
func (r *run) nemesis(e history.Event, started map[string]history.Event) {
	kind, phase, _ := strings.Cut(e.Value, " ")
	k := kind + "|" + e.Key
	switch phase {
	case "start":
		started[k] = e
	case "stop":
		if s, ok := started[k]; ok {
			delete(started, k)
			r.faults = append(r.faults, fault{kind: kind, target: e.Key, from: s.TimeNS, to: e.TimeNS,
				startIdx: s.Index, stopIdx: e.Index, healed: true})
		}
	}
}

func (r *run) opProof(o op) bool { return r.proof[o.inv.Index] || (!o.open && r.proof[o.compl.Index]) }

func (r *run) holdProof(h checker.Hold) bool {
	for _, e := range h.Proof {
		if r.proof[e.Index] {
			return true
		}
	}
	return false
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }
