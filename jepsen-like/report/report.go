package report

import (
	"fmt"
	"html"
	"io"
	"sort"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

const (
	laneH   = 16
	left    = 70
	width   = 1400
	nemLane = 3 // lanes reserved for faults
)

// Write writes the report of events and results to w.
func Write(w io.Writer, title string, events []history.Event, results []checker.Result) error {
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) + "</title><style>")
	b.WriteString(`body{font:13px sans-serif;margin:16px}table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:3px 8px;text-align:left}
.valid{color:#080}.invalid{color:#c00;font-weight:bold}.unknown{color:#b60}svg text{font:10px monospace}pre{font-size:11px}`)
	b.WriteString("</style></head><body><h1>" + html.EscapeString(title) + "</h1>")
	b.WriteString("<table><tr><th>checker</th><th>verdict</th><th>explanation</th></tr>")
	proof := make(map[int]bool)
	for _, r := range results {
		fmt.Fprintf(&b, "<tr><td>%s</td><td class=%q>%s</td><td>%s</td></tr>", html.EscapeString(r.Checker), r.Verdict, r.Verdict, html.EscapeString(r.Explanation))
		for _, e := range r.Ops {
			proof[e.Index] = true
		}
	}
	b.WriteString("</table>")
	b.WriteString("<p>" + html.EscapeString(summary(events)) + "</p>")
	b.WriteString("<p>Legend: lanes are processes (p0, p1, …), the top lanes faults. Blue band: a hold (acquire ok → release invoke or validity end). Bars: green ok, grey fail, orange info. Red: a fault. Black outline: events that prove an invalid verdict. Hover for details.</p>")
	timeline(&b, events, proof)
	b.WriteString("<h2>Proof</h2>")
	for _, r := range results {
		if len(r.Ops) == 0 {
			continue
		}
		fmt.Fprintf(&b, "<h3>%s</h3><pre>", html.EscapeString(r.Checker))
		for _, e := range r.Ops {
			b.WriteString(html.EscapeString(e.String()) + "\n")
		}
		b.WriteString("</pre>")
	}
	b.WriteString("</body></html>\n")
	_, err := io.WriteString(w, b.String())
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

type bar struct {
	lane       int
	from, to   int64
	color, tip string
	proof      bool
	band       bool
}

func timeline(b *strings.Builder, events []history.Event, proof map[int]bool) {
	var end int64 = 1
	procs := map[int]bool{}
	for _, e := range events {
		end = max(end, e.TimeNS, e.ValidUntilNS)
		if e.Process >= 0 {
			procs[e.Process] = true
		}
	}
	var ids []int
	for p := range procs {
		ids = append(ids, p)
	}
	sort.Ints(ids)
	lane := map[int]int{}
	for i, p := range ids {
		lane[p] = nemLane + i
	}
	var bars []bar
	open := map[int]history.Event{}
	holdStart := map[int]history.Event{}
	faults := map[string]history.Event{}
	nemSlot := 0
	for _, e := range events {
		if e.Process == history.NemesisProcess {
			name, phase, _ := strings.Cut(e.Value, " ")
			k := name + "|" + e.Key
			if phase == "start" {
				faults[k] = e
				continue
			}
			if s, ok := faults[k]; ok && phase == "stop" {
				delete(faults, k)
				bars = append(bars, bar{lane: nemSlot % nemLane, from: s.TimeNS, to: e.TimeNS, color: "#e33", band: true,
					tip: name + " " + e.Key + fmt.Sprintf(" %.3fs–%.3fs", sec(s.TimeNS), sec(e.TimeNS))})
				nemSlot++
			}
			continue
		}
		if e.Type == history.Invoke {
			open[e.Process] = e
			if e.F == history.Release {
				if h, ok := holdStart[e.Process]; ok {
					delete(holdStart, e.Process)
					bars = append(bars, holdBar(lane[e.Process], h, min(e.TimeNS, h.ValidUntilNS), proof[h.Index] || proof[e.Index]))
				}
			}
			continue
		}
		inv, ok := open[e.Process]
		if !ok {
			continue
		}
		delete(open, e.Process)
		color := map[history.Type]string{history.OK: "#2a2", history.Fail: "#999", history.Info: "#f90"}[e.Type]
		bars = append(bars, bar{lane: lane[e.Process], from: inv.TimeNS, to: e.TimeNS, color: color,
			proof: proof[inv.Index] || proof[e.Index], tip: inv.String() + "\n" + e.String()})
		if e.F == history.Acquire && e.Type == history.OK {
			if h, ok := holdStart[e.Process]; ok { // validity ran out, no release
				bars = append(bars, holdBar(lane[e.Process], h, h.ValidUntilNS, proof[h.Index]))
			}
			holdStart[e.Process] = e
		}
	}
	for p, h := range holdStart {
		bars = append(bars, holdBar(lane[p], h, h.ValidUntilNS, proof[h.Index]))
	}
	for k, s := range faults {
		bars = append(bars, bar{lane: nemSlot % nemLane, from: s.TimeNS, to: end, color: "#e33", band: true, tip: k + " (not healed)"})
		nemSlot++
	}
	lanes := nemLane + len(ids)
	h := (lanes+2)*laneH + 20
	x := func(t int64) float64 { return left + float64(t)/float64(end)*float64(width-left-10) }
	fmt.Fprintf(b, `<svg xmlns="http://www.w3.org/2000/svg" width="%d" height="%d">`, width, h)
	for i := range nemLane {
		fmt.Fprintf(b, `<text x="2" y="%d">%s</text>`, i*laneH+12, map[bool]string{true: "nemesis", false: ""}[i == 0])
	}
	for i, p := range ids {
		fmt.Fprintf(b, `<text x="2" y="%d">p%d</text>`, (nemLane+i)*laneH+12, p)
	}
	for s := int64(0); s <= end; s += 1e9 {
		fmt.Fprintf(b, `<line x1="%.1f" x2="%.1f" y1="0" y2="%d" stroke="#eee"/><text x="%.1f" y="%d">%ds</text>`, x(s), x(s), lanes*laneH, x(s)+2, lanes*laneH+12, s/1e9)
	}
	sort.SliceStable(bars, func(i, j int) bool { return bars[i].band && !bars[j].band })
	for _, br := range bars {
		y, hh := br.lane*laneH+2, laneH-4
		if !br.band {
			y, hh = br.lane*laneH+5, laneH-10
		}
		stroke := ""
		if br.proof {
			stroke = ` stroke="#000" stroke-width="2"`
		}
		wd := max(x(br.to)-x(br.from), 1.5)
		fmt.Fprintf(b, `<rect x="%.1f" y="%d" width="%.1f" height="%d" fill="%s" fill-opacity="%s"%s><title>%s</title></rect>`,
			x(br.from), y, wd, hh, br.color, map[bool]string{true: "0.35", false: "0.9"}[br.band], stroke, html.EscapeString(br.tip))
	}
	b.WriteString("</svg>")
}

// summary counts processes, acquisitions and faults.
func summary(events []history.Event) string {
	procs := map[int]bool{}
	acquired, failed := 0, 0
	faults := map[string]int{}
	var order []string
	for _, e := range events {
		switch {
		case e.F == history.Nemesis:
			name, phase, _ := strings.Cut(e.Value, " ")
			if phase == "start" && name != "confine" {
				if faults[name] == 0 {
					order = append(order, name)
				}
				faults[name]++
			}
		case e.F == history.Acquire && e.Type == history.OK:
			acquired++
		case e.F == history.Acquire && e.Type == history.Fail:
			failed++
		}
		if e.Process >= 0 {
			procs[e.Process] = true
		}
	}
	parts := make([]string, len(order))
	for i, n := range order {
		parts[i] = fmt.Sprintf("%s ×%d", n, faults[n])
	}
	f := "none"
	if len(parts) > 0 {
		f = strings.Join(parts, ", ")
	}
	return fmt.Sprintf("%d events, %d processes, %d acquisitions (%d attempts failed); faults: %s", len(events), len(procs), acquired, failed, f)
}

func holdBar(lane int, ok history.Event, to int64, proof bool) bar {
	return bar{lane: lane, from: ok.TimeNS, to: to, color: "#36c", band: true, proof: proof,
		tip: fmt.Sprintf("hold of %s by p%d, token %d, %.3fs–%.3fs", ok.Key, ok.Process, ok.Token, sec(ok.TimeNS), sec(to))}
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }
