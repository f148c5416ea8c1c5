package report

import (
	"fmt"
	"html"
	"math"
	"sort"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

const (
	pageW  = 1200 // every plot's width: it fits a 1280-pixel window
	laneH  = 16
	labelW = 96 // the lane labels' column
	axisH  = 16
)

// span is the time range a plot draws and its x scale.
type span struct{ t0, t1 int64 }

func (s span) x(t int64) float64 {
	t = min(max(t, s.t0), s.t1)
	return labelW + float64(t-s.t0)/float64(max(s.t1-s.t0, 1))*float64(pageW-labelW-8)
}

func (s span) meets(from, to int64) bool { return from <= s.t1 && to >= s.t0 }

// mark is one bar of a lane before aggregation.
type mark struct {
	x1, x2 float64
	color  string
	band   bool // a hold (a full-height translucent band)
	proof  bool
	tip    string
	what   string // for an aggregated tooltip: "ok acquire", "hold"
	from   int64
	to     int64
}

// maxZoomLanes bounds the process lanes of a zoom, so that it fits the
// first screen.
const maxZoomLanes = 24

// processLanes gives each process a lane. With a proof (the zoom) every
// process with something in sp gets its own lane, the proof's processes
// first, at most maxZoomLanes; otherwise processes are packed: a lane holds
// processes whose lives do not overlap, so a run of many short-lived
// clients needs about as many lanes as client slots.
func (r *run) processLanes(sp span, proof []history.Event) (map[int]int, []string) {
	perProcess := proof != nil
	life := make(map[int][2]int64)
	touch := func(p int, from, to int64) {
		if !sp.meets(from, to) && perProcess {
			return
		}
		l, ok := life[p]
		if !ok {
			l = [2]int64{from, to}
		}
		life[p] = [2]int64{min(l[0], from), max(l[1], to)}
	}
	for _, o := range r.ops {
		touch(o.process, o.from, o.to)
	}
	for _, h := range r.holds {
		touch(h.Process, h.Start, h.End)
	}
	procs := make([]int, 0, len(life))
	for p := range life {
		procs = append(procs, p)
	}
	sort.Ints(procs)
	lane := make(map[int]int, len(procs))
	var labels []string
	if perProcess {
		inProof := make(map[int]bool)
		for _, e := range proof {
			inProof[e.Process] = true
		}
		sort.SliceStable(procs, func(i, j int) bool { return inProof[procs[i]] && !inProof[procs[j]] })
		for i, p := range procs[:min(len(procs), maxZoomLanes)] {
			lane[p] = i
			labels = append(labels, fmt.Sprintf("p%d", p))
		}
		return lane, labels
	}
	sort.SliceStable(procs, func(i, j int) bool { return life[procs[i]][0] < life[procs[j]][0] })
	var free []int64 // per lane: when its last process ended
	var names [][]int
	for _, p := range procs {
		l := -1
		for i, end := range free {
			if end < life[p][0] {
				l = i
				break
			}
		}
		if l < 0 {
			l = len(free)
			free, names = append(free, 0), append(names, nil)
		}
		free[l] = life[p][1]
		names[l] = append(names[l], p)
		lane[p] = l
	}
	for _, ps := range names {
		s := fmt.Sprintf("p%d", ps[0])
		if len(ps) > 1 {
			s += fmt.Sprintf(" +%d", len(ps)-1)
		}
		labels = append(labels, s)
	}
	return lane, labels
}

// timeline draws the fault lanes (one per fault kind, each band named) and
// the process lanes over sp (one per process, the proof's first, when
// proof is given: the zoom): holds as blue bands, operations as bars,
// proof events outlined in black, every overlap framed. Marks of one color
// closer than mergeGap pixels in a lane are merged (the tooltip counts them).
func (r *run) timeline(b *strings.Builder, class string, sp span, proof []history.Event) int {
	lane, labels := r.processLanes(sp, proof)
	nf := len(r.kinds)
	top := func(l int) float64 { return float64((nf+l)*laneH) + 4 }
	h := (nf+len(labels))*laneH + axisH + 8
	s := newSVG(b, class, pageW, h)
	defer s.close()
	s.rect(labelW, 0, pageW-labelW, float64(nf*laneH)+2, "#fbf3f3", "", "")
	r.axis(s, sp, float64((nf+len(labels))*laneH)+4)
	for i, k := range r.kinds {
		s.text(2, float64(i*laneH+12), ` class="lane-label"`, k)
	}
	for i, l := range labels {
		s.text(2, top(i)+10, ` class="lane-label"`, l)
	}
	r.faultBands(s, sp)
	marks := make([][]mark, len(labels))
	for _, hd := range r.holds {
		if l, ok := lane[hd.Process]; ok && sp.meets(hd.Start, hd.End) {
			marks[l] = append(marks[l], mark{x1: sp.x(hd.Start), x2: sp.x(hd.End), color: "#36c", band: true, proof: r.holdProof(hd),
				what: "hold", from: hd.Start, to: hd.End,
				tip: fmt.Sprintf("hold of %s by p%d, token %d, %.3fs–%.3fs", hd.Key, hd.Process, hd.Token, sec(hd.Start), sec(hd.End))})
		}
	}
	for _, o := range r.ops {
		if l, ok := lane[o.process]; ok && sp.meets(o.from, o.to) {
			tip := o.inv.String() + "\n" + o.compl.String()
			if o.open {
				tip = o.inv.String() + "\n(never completed)"
			}
			marks[l] = append(marks[l], mark{x1: sp.x(o.from), x2: sp.x(o.to), color: typeColor(o.typ), proof: r.opProof(o),
				what: string(o.typ) + " " + string(o.f), from: o.from, to: o.to, tip: tip})
		}
	}
	for l, ms := range marks {
		drawMarks(s, top(l), ms)
	}
	for i, o := range r.overlaps {
		la, oka := lane[o.Processes[0]]
		lb, okb := lane[o.Processes[1]]
		if !oka || !okb || !sp.meets(o.FromNS, o.ToNS) {
			continue
		}
		s.overlap(i, o, sp.x(o.FromNS), max(sp.x(o.ToNS)-sp.x(o.FromNS), 3), top(la), top(lb))
	}
	return s.elements
}

// overlap frames overlap i on both holders' lanes (at y1 and y2) and joins
// the two frames with a dashed line: one group, one tooltip.
func (s *svg) overlap(i int, o checker.Overlap, x, w, y1, y2 float64) {
	tip := fmt.Sprintf("overlap %d: %s held by p%d and p%d at once, %.3fs–%.3fs", i+1, o.Key, o.Processes[0], o.Processes[1], sec(o.FromNS), sec(o.ToNS))
	fmt.Fprintf(s.b, `<g class="overlap" data-overlap="%d"><title>%s</title>`, i, html.EscapeString(tip))
	for _, y := range []float64{y1, y2} {
		s.rect(x, y-3, w, laneH-2, "#e00", ` fill-opacity="0.3" stroke="#000" stroke-width="1.5" stroke-dasharray="4 2"`, "")
	}
	s.line(x+1, min(y1, y2)+laneH-5, x+1, max(y1, y2)-3, "#000")
	s.b.WriteString("</g>")
}

func typeColor(t history.Type) string {
	switch t {
	case history.OK:
		return "#2a2"
	case history.Fail:
		return "#999"
	}
	return "#f90"
}

// mergeGap is how close (pixels) two marks of one color in a lane must be
// to be drawn as one: a busy lane of a long run becomes a few long bars.
const mergeGap = 3

// drawMarks draws one lane's marks: bands under bars, marks of one color
// closer than mergeGap merged, proof marks alone and outlined.
func drawMarks(s *svg, y float64, ms []mark) {
	sort.SliceStable(ms, func(i, j int) bool {
		if ms[i].band != ms[j].band {
			return ms[i].band
		}
		return ms[i].x1 < ms[j].x1
	})
	var proof []mark
	open := make(map[string]*mark) // by color: the mark being merged
	count := make(map[string]int)
	flush := func(m *mark, n int) {
		tip := m.tip
		if n > 1 {
			tip = fmt.Sprintf("%d × %s, %.3fs–%.3fs", n, m.what, sec(m.from), sec(m.to))
		}
		yy, hh, op := y+3, float64(laneH-10), "0.9"
		if m.band {
			yy, hh, op = y-2, float64(laneH-4), "0.35"
		}
		attrs := ` fill-opacity="` + op + `"`
		if m.proof {
			attrs += ` class="proof" stroke="#000" stroke-width="2"`
		}
		s.rect(m.x1, yy, max(m.x2-m.x1, 1.5), hh, m.color, attrs, tip)
	}
	for i := range ms {
		m := ms[i]
		if m.proof {
			proof = append(proof, m)
			continue
		}
		k := m.color + fmt.Sprint(m.band)
		if cur, ok := open[k]; ok && m.x1 <= max(cur.x2, cur.x1+1.5)+mergeGap {
			cur.x2, cur.to = max(cur.x2, m.x2), max(cur.to, m.to)
			count[k]++
			continue
		}
		if cur, ok := open[k]; ok {
			flush(cur, count[k])
		}
		open[k], count[k] = &m, 1
	}
	keys := make([]string, 0, len(open))
	for k := range open {
		keys = append(keys, k)
	}
	sort.Strings(keys)
	for _, k := range keys {
		flush(open[k], count[k])
	}
	for i := range proof {
		flush(&proof[i], 1)
	}
}

// faultBands draws each fault in its kind's lane with its name on the band
// or, if the band is too narrow, just after it; a name that would run into
// the next one is left to the lane's label and the tooltip.
func (r *run) faultBands(s *svg, sp span) {
	labelEnd := make([]float64, len(r.kinds))
	drawn := 0
	for _, f := range r.faults {
		if !sp.meets(f.from, f.to) || drawn >= maxFaults {
			continue
		}
		drawn++
		l := indexOf(r.kinds, f.kind)
		y := float64(l*laneH) + 2
		x1, x2 := sp.x(f.from), sp.x(f.to)
		col := faultColor(r.kinds, f.kind)
		s.rect(x1, y, max(x2-x1, 2), laneH-3, col, fmt.Sprintf(` class="fault" data-fault=%q fill-opacity="0.45"`, f.kind), f.tip())
		name := f.label()
		if float64(len(name))*charW > x2-x1-4 {
			name = f.kind
		}
		w := float64(len(name)) * charW
		var at float64
		switch {
		case w <= x2-x1-4 && x1+2 >= labelEnd[l]:
			at = x1 + 2
		case x2+2 >= labelEnd[l] && x2+2+w <= pageW:
			at = x2 + 2
		default:
			continue
		}
		labelEnd[l] = at + w + 4
		s.text(at, y+10, fmt.Sprintf(` class="fault-label" data-fault=%q`, f.kind), name)
	}
}

// maxFaults bounds the fault bands of one plot.
const maxFaults = 500

func indexOf(xs []string, x string) int {
	for i, y := range xs {
		if y == x {
			return i
		}
	}
	return 0
}

// axis draws the time grid of sp, about ten steps of 1, 2 or 5 × 10^k
// nanoseconds, labelled in seconds.
func (r *run) axis(s *svg, sp span, bottom float64) {
	d := float64(max(sp.t1-sp.t0, 1))
	step := math.Pow(10, math.Floor(math.Log10(d/10)))
	for _, m := range []float64{1, 2, 5, 10} {
		if d/(step*m) <= 12 {
			step *= m
			break
		}
	}
	digits := max(0, int(math.Ceil(-math.Log10(step/1e9))))
	for t := math.Ceil(float64(sp.t0)/step) * step; t <= float64(sp.t1); t += step {
		x := sp.x(int64(t))
		s.line(x, 0, x, bottom, "#e4e4e4")
		if label := fmt.Sprintf("%.*fs", digits, t/1e9); x+2+float64(len(label))*charW <= pageW {
			s.text(x+2, bottom+12, "", label)
		}
	}
}
