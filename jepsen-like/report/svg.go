package report

import (
	"fmt"
	"html"
	"strings"
)

// svg writes one SVG element and counts the elements it holds, so that a
// long run's report stays bounded (see maxElements).
type svg struct {
	b        *strings.Builder
	elements int
}

func newSVG(b *strings.Builder, class string, width, height int) *svg {
	fmt.Fprintf(b, `<svg class=%q xmlns="http://www.w3.org/2000/svg" width="%d" height="%d" viewBox="0 0 %d %d">`, class, width, height, width, height)
	return &svg{b: b}
}

func (s *svg) close() { s.b.WriteString("</svg>") }

// rect draws a rectangle; attrs are extra attributes (class, stroke, ...);
// a tip becomes its tooltip.
func (s *svg) rect(x, y, w, h float64, fill, attrs, tip string) {
	s.elements++
	fmt.Fprintf(s.b, `<rect x="%.1f" y="%.1f" width="%.1f" height="%.1f" fill="%s"%s>`, x, y, max(w, 1), h, fill, attrs)
	if tip != "" {
		s.b.WriteString("<title>" + html.EscapeString(tip) + "</title>")
	}
	s.b.WriteString("</rect>")
}

// text writes text whose baseline starts at x, y.
func (s *svg) text(x, y float64, attrs, t string) {
	s.elements++
	fmt.Fprintf(s.b, `<text x="%.1f" y="%.1f"%s>%s</text>`, x, y, attrs, html.EscapeString(t))
}

func (s *svg) line(x1, y1, x2, y2 float64, stroke string) {
	s.elements++
	fmt.Fprintf(s.b, `<line x1="%.1f" y1="%.1f" x2="%.1f" y2="%.1f" stroke="%s"/>`, x1, y1, x2, y2, stroke)
}

// path draws one path: many marks as a single element.
func (s *svg) path(d, attrs, tip string) {
	s.elements++
	fmt.Fprintf(s.b, `<path d="%s"%s>`, d, attrs)
	if tip != "" {
		s.b.WriteString("<title>" + html.EscapeString(tip) + "</title>")
	}
	s.b.WriteString("</path>")
}

// charW is the width of a character of the 10 px monospace font, about.
const charW = 6.1

// faultColor is a fault kind's color, the same in every plot.
func faultColor(kinds []string, kind string) string {
	palette := []string{"#d62728", "#9467bd", "#8c564b", "#e377c2", "#bcbd22", "#17becf", "#ff7f0e", "#7f7f7f", "#1f77b4", "#2ca02c"}
	for i, k := range kinds {
		if k == kind {
			return palette[i%len(palette)]
		}
	}
	return palette[0]
}
