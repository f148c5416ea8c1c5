package bench

import (
	"fmt"
	"slices"
	"strings"
)

// Summary folds the repetitions of each scenario and library (Config.Repeat)
// into one row, in the order they first appear: rates, latencies and CPU
// are each their own median over the repetitions (so one row's client and
// servers CPU may come from different repetitions), the worst latency is
// the largest, counts are summed, and the shares are the widest seen.
// Rows of a single repetition are returned as they are; skipped ones too.
func Summary(rows []Row) []Row {
	var order []string
	groups := map[string][]Row{}
	for _, r := range rows {
		k := r.Scenario + "\x00" + r.Library
		if _, ok := groups[k]; !ok {
			order = append(order, k)
		}
		groups[k] = append(groups[k], r)
	}
	out := make([]Row, 0, len(order))
	for _, k := range order {
		out = append(out, fold(groups[k]))
	}
	return out
}

// fold is Summary for the repetitions of one scenario and library.
func fold(rs []Row) Row {
	s := rs[0]
	if len(rs) == 1 || s.Skipped != "" {
		return s
	}
	s.Rep, s.Repeats = 0, len(rs)
	med := func(f func(Row) float64) float64 {
		v := make([]float64, len(rs))
		for i, r := range rs {
			v[i] = f(r)
		}
		slices.Sort(v)
		if len(v)%2 == 1 {
			return v[len(v)/2]
		}
		return (v[len(v)/2-1] + v[len(v)/2]) / 2
	}
	s.OpsPerSec = med(func(r Row) float64 { return r.OpsPerSec })
	s.AcqP50US = med(func(r Row) float64 { return r.AcqP50US })
	s.AcqP99US = med(func(r Row) float64 { return r.AcqP99US })
	s.PairP50US = med(func(r Row) float64 { return r.PairP50US })
	s.CPUClientUS = med(func(r Row) float64 { return r.CPUClientUS })
	s.CPUServersUS = med(func(r Row) float64 { return r.CPUServersUS })
	s.OwnerChangesPerSec = med(func(r Row) float64 { return r.OwnerChangesPerSec })
	s.ShareMaxMin = med(func(r Row) float64 { return r.ShareMaxMin })
	s.WindowS, s.Ops, s.Failed, s.InFlight, s.OwnerChanges, s.Starved, s.Overlaps = 0, 0, 0, 0, 0, 0, 0
	for i, r := range rs {
		s.WindowS += r.WindowS
		s.Ops += r.Ops
		s.Failed += r.Failed
		s.InFlight += r.InFlight
		s.OwnerChanges += r.OwnerChanges
		s.Starved += r.Starved
		s.Overlaps += r.Overlaps
		s.AcqMaxUS = max(s.AcqMaxUS, r.AcqMaxUS)
		if s.FirstError == "" {
			s.FirstError = r.FirstError
		}
		if i > 0 {
			s.ShareMin, s.ShareMax = min(s.ShareMin, r.ShareMin), max(s.ShareMax, r.ShareMax)
			s.ClientShareMin, s.ClientShareMax = min(s.ClientShareMin, r.ClientShareMin), max(s.ClientShareMax, r.ClientShareMax)
		}
	}
	return s
}

// Targets renders issue 19's performance targets against redsync for each
// quorumlock library among rows (summary rows: see Summary), as a Markdown
// table with a "met" column per library; a target whose rows are missing
// is left out. "" when rows hold no quorumlock library or no redsync.
//
//   - uncontended-1: CPU per pair (client + servers) at most redsync's;
//   - uncontended-64: CPU per pair at most half redsync's, and at least 3x
//     its pairs/s;
//   - stall1-defaults and stall2-defaults: at least 90 % of the library's
//     own pairs/s in uncontended-16 (the same 16 goroutines, healthy);
//   - hotkey-32: at least 8x redsync's owner changes/s, and a wait p99 at
//     most 1/20 of redsync's.
func Targets(rows []Row) string {
	find := func(sc, lib string) (Row, bool) {
		i := slices.IndexFunc(rows, func(r Row) bool {
			return r.Scenario == sc && r.Library == lib && r.Skipped == "" && r.Ops > 0
		})
		if i < 0 {
			return Row{}, false
		}
		return rows[i], true
	}
	var libs []string
	for _, l := range []string{Quorumlock, QuorumlockLock, QuorumlockNoFencing, QuorumlockTolerant} {
		if slices.ContainsFunc(rows, func(r Row) bool { return r.Library == l }) {
			libs = append(libs, l)
		}
	}
	if len(libs) == 0 || !slices.ContainsFunc(rows, func(r Row) bool { return r.Library == Redsync }) {
		return ""
	}
	cpu := func(r Row) float64 { return r.CPUClientUS + r.CPUServersUS }
	type target struct {
		name string
		// check returns the figure shown and whether the target is met.
		check func(lib string) (string, bool, bool)
	}
	against := func(sc string, f func(q, rs Row) (string, bool)) func(string) (string, bool, bool) {
		return func(lib string) (string, bool, bool) {
			q, ok1 := find(sc, lib)
			rs, ok2 := find(sc, Redsync)
			if !ok1 || !ok2 {
				return "", false, false
			}
			fig, met := f(q, rs)
			return fig, met, true
		}
	}
	stalled := func(sc string) func(string) (string, bool, bool) {
		return func(lib string) (string, bool, bool) {
			q, ok1 := find(sc, lib)
			h, ok2 := find("uncontended-16", lib)
			if !ok1 || !ok2 || h.OpsPerSec == 0 {
				return "", false, false
			}
			f := q.OpsPerSec / h.OpsPerSec
			return fmt.Sprintf("%.0f %%", 100*f), f >= 0.9, true
		}
	}
	targets := []target{
		{"1 goroutine: CPU per pair at most redsync's", against("uncontended-1", func(q, rs Row) (string, bool) {
			return fmt.Sprintf("%.0f µs, %.2fx", cpu(q), cpu(q)/cpu(rs)), cpu(q) <= cpu(rs)
		})},
		{"64 goroutines: CPU per pair at most half redsync's", against("uncontended-64", func(q, rs Row) (string, bool) {
			return fmt.Sprintf("%.0f µs, %.0f %%", cpu(q), 100*cpu(q)/cpu(rs)), cpu(q) <= cpu(rs)/2
		})},
		{"64 goroutines: at least 3x redsync's pairs/s", against("uncontended-64", func(q, rs Row) (string, bool) {
			return fmt.Sprintf("%.2fx", q.OpsPerSec/rs.OpsPerSec), q.OpsPerSec >= 3*rs.OpsPerSec
		})},
		{"1 of 5 stalled: at least 90 % of healthy (16 goroutines)", stalled("stall1-defaults")},
		{"2 of 5 stalled: at least 90 % of healthy (16 goroutines)", stalled("stall2-defaults")},
		{"hot key 32: at least 8x redsync's owner changes/s", against("hotkey-32", func(q, rs Row) (string, bool) {
			return fmt.Sprintf("%.1fx", q.OwnerChangesPerSec/rs.OwnerChangesPerSec), q.OwnerChangesPerSec >= 8*rs.OwnerChangesPerSec
		})},
		{"hot key 32: wait p99 at most 1/20 of redsync's", against("hotkey-32", func(q, rs Row) (string, bool) {
			return fmt.Sprintf("%s, 1/%.1f", fmtUS(q.AcqP99US), rs.AcqP99US/q.AcqP99US), 20*q.AcqP99US <= rs.AcqP99US
		})},
	}
	var b strings.Builder
	b.WriteString("| target |")
	for _, l := range libs {
		fmt.Fprintf(&b, " %s | met |", l)
	}
	b.WriteString("\n|---|")
	b.WriteString(strings.Repeat("---:|---|", len(libs)))
	b.WriteString("\n")
	n := 0
	for _, t := range targets {
		var cells strings.Builder
		measured := false
		for _, l := range libs {
			fig, met, ok := t.check(l)
			switch {
			case !ok:
				cells.WriteString(" – | |")
			case met:
				measured = true
				fmt.Fprintf(&cells, " %s | yes |", fig)
			default:
				measured = true
				fmt.Fprintf(&cells, " %s | **no** |", fig)
			}
		}
		if measured {
			fmt.Fprintf(&b, "| %s |%s\n", t.name, cells.String())
			n++
		}
	}
	if n == 0 {
		return ""
	}
	return b.String()
}
