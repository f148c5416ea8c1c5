package report

import (
	"fmt"
	"math"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

const plotH = 180 // the latency and rate plots' drawing height

// shadeFaults shades each fault over a plot's height in its kind's color,
// its kind written at the top when there is room.
func (r *run) shadeFaults(s *svg, sp span, y0, h float64) {
	labelEnd := 0.0
	drawn := 0
	for _, f := range r.faults {
		if !sp.meets(f.from, f.to) || drawn >= maxFaults {
			continue
		}
		drawn++
		x1, x2 := sp.x(f.from), sp.x(f.to)
		col := faultColor(r.kinds, f.kind)
		s.rect(x1, y0, max(x2-x1, 2), h, col, fmt.Sprintf(` class="fault-shade" data-fault=%q fill-opacity="0.15"`, f.kind), f.tip())
		if w := float64(len(f.kind)) * charW; x1+1 >= labelEnd && x1+1+w <= pageW {
			s.text(x1+1, y0+10, fmt.Sprintf(` class="fault-label" fill=%q`, col), f.kind)
			labelEnd = x1 + w + 6
		}
	}
}

// latency plots each acquire's latency (invoke to completion) against its
// invoke time: ok, fail and info as separate marks, one path each, at most
// one mark per pixel.
func (r *run) latency(b *strings.Builder, sp span) int {
	var maxLat int64 = 1
	for _, o := range r.ops {
		if o.f == history.Acquire && !o.open {
			maxLat = max(maxLat, o.to-o.from)
		}
	}
	top := 8.0
	s := newSVG(b, "latency", pageW, plotH+axisH+20)
	defer s.close()
	r.axis(s, sp, top+plotH)
	r.shadeFaults(s, sp, top, plotH)
	y := func(lat int64) float64 { return top + plotH - float64(lat)/float64(maxLat)*plotH }
	for _, frac := range []float64{0, 0.25, 0.5, 0.75, 1} {
		lat := int64(frac * float64(maxLat))
		s.line(labelW, y(lat), pageW-8, y(lat), "#eee")
		s.text(2, y(lat)+4, "", fmt.Sprintf("%.0f ms", float64(lat)/1e6))
	}
	for _, t := range []history.Type{history.OK, history.Fail, history.Info} {
		var pts [][2]float64
		for _, o := range r.ops {
			if o.f == history.Acquire && o.typ == t && !o.open && sp.meets(o.from, o.from) {
				pts = append(pts, [2]float64{sp.x(o.from), y(o.to - o.from)})
			}
		}
		if len(pts) == 0 {
			continue
		}
		var d strings.Builder
		cells := thin(pts)
		for _, c := range cells {
			latencyMark(&d, t, c[0], c[1])
		}
		tip := fmt.Sprintf("%d acquires %s", len(pts), t)
		if len(cells) < len(pts) {
			tip += fmt.Sprintf(" (drawn as %d marks)", len(cells))
		}
		s.path(d.String(), fmt.Sprintf(` class="latency-%s" fill=%q stroke=%q`, t, typeColor(t), typeColor(t)), tip)
	}
	return s.elements
}

// maxMarks bounds the marks of one series of the latency plot.
const maxMarks = 2000

// thin keeps one point per cell of a grid, the cells one pixel wide and
// doubled until at most maxMarks are left; a point stands at its cell's
// center.
func thin(pts [][2]float64) [][2]float64 {
	for cell := 1.0; ; cell *= 2 {
		seen := make(map[[2]int]bool)
		var out [][2]float64
		for _, p := range pts {
			c := [2]int{int(p[0] / cell), int(p[1] / cell)}
			if !seen[c] {
				seen[c] = true
				out = append(out, [2]float64{(float64(c[0]) + 0.5) * cell, (float64(c[1]) + 0.5) * cell})
			}
		}
		if len(out) <= maxMarks || cell >= 64 {
			return out
		}
	}
}

// latencyMark is a small square (ok), cross (fail) or triangle (info) at x, y.
func latencyMark(d *strings.Builder, t history.Type, x, y float64) {
	switch t {
	case history.OK:
		fmt.Fprintf(d, "M%.0f %.0fh3v3h-3z", x-1, y-1)
	case history.Fail:
		fmt.Fprintf(d, "M%.0f %.0fl4 4m0 -4l-4 4", x-2, y-2)
	default:
		fmt.Fprintf(d, "M%.0f %.0fl3 4h-6z", x, y-2)
	}
}

// rate plots acquisitions per second: acquires completed ok, and failed,
// per bucket of at least a second (more when the run has more seconds than
// the plot has pixels), as two step lines.
func (r *run) rate(b *strings.Builder, sp span) int {
	bucket := max(int64(1e9), (sp.t1-sp.t0)/int64(pageW-labelW-8)+1)
	nb := int((sp.t1-sp.t0)/bucket) + 1
	ok, failed := make([]int, nb), make([]int, nb)
	for _, o := range r.ops {
		if o.f != history.Acquire || o.open || !sp.meets(o.to, o.to) {
			continue
		}
		i := int((o.to - sp.t0) / bucket)
		switch o.typ {
		case history.OK:
			ok[i]++
		case history.Fail, history.Info:
			failed[i]++
		}
	}
	peak := 1.0
	perSec := func(n int) float64 { return float64(n) / (float64(bucket) / 1e9) }
	for i := range ok {
		peak = max(peak, perSec(ok[i]), perSec(failed[i]))
	}
	top := 8.0
	s := newSVG(b, "rate", pageW, plotH+axisH+20)
	defer s.close()
	r.axis(s, sp, top+plotH)
	r.shadeFaults(s, sp, top, plotH)
	y := func(v float64) float64 { return top + plotH - v/peak*plotH }
	for _, frac := range []float64{0, 0.5, 1} {
		s.line(labelW, y(frac*peak), pageW-8, y(frac*peak), "#eee")
		s.text(2, y(frac*peak)+4, "", fmt.Sprintf("%.1f /s", frac*peak))
	}
	for _, series := range []struct {
		name, color string
		counts      []int
	}{{"ok", "#2a2", ok}, {"fail", "#999", failed}} {
		var d strings.Builder
		for i, n := range series.counts {
			x1, x2 := sp.x(sp.t0+int64(i)*bucket), sp.x(sp.t0+int64(i+1)*bucket)
			if i == 0 {
				fmt.Fprintf(&d, "M%.1f %.1f", x1, y(perSec(n)))
			} else {
				fmt.Fprintf(&d, "V%.1f", y(perSec(n)))
			}
			fmt.Fprintf(&d, "H%.1f", x2)
		}
		s.path(d.String(), fmt.Sprintf(` class="rate-%s" fill="none" stroke=%q stroke-width="1.5"`, series.name, series.color),
			fmt.Sprintf("acquires %s per second (buckets of %.0f s)", series.name, math.Round(float64(bucket)/1e9)))
	}
	return s.elements
}
