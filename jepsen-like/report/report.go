package report

import (
	"fmt"
	"html"
	"io"
	"os"
	"path/filepath"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// RegisterFile is the name of the porcupine visualization WriteDir writes
// beside report.html when the history has register operations.
const RegisterFile = "register.html"

// Write writes the report of events and results to w: report.html without
// the link to the register's visualization (WriteDir writes both).
func Write(w io.Writer, title string, events []history.Event, results []checker.Result) error {
	return writePage(w, title, events, results, nil)
}

// WriteDir writes dir/report.html and, when the history has a write or a
// read, dir/register.html (RegisterFile): porcupine's visualization of the
// register, fault intervals drawn as annotations, linked from the report.
// Errors are the files' (wrapped).
func WriteDir(dir, title string, events []history.Event, results []checker.Result) error {
	var reg *registerLink
	var page strings.Builder
	if ok, view, err := writeRegister(&page, events); err != nil {
		return err
	} else if ok {
		if err := os.WriteFile(filepath.Join(dir, RegisterFile), []byte(page.String()), 0o644); err != nil {
			return fmt.Errorf("report: %w", err)
		}
		reg = &registerLink{file: RegisterFile, view: view}
	}
	f, err := os.Create(filepath.Join(dir, "report.html"))
	if err != nil {
		return fmt.Errorf("report: %w", err)
	}
	if err := writePage(f, title, events, results, reg); err != nil {
		_ = f.Close()
		return err
	}
	if err := f.Close(); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

const style = `body{font:13px sans-serif;margin:12px 16px}h1{font-size:16px;margin:0 0 6px}h2{font-size:14px;margin:14px 0 4px}
table{border-collapse:collapse}td,th{border:1px solid #ccc;padding:2px 8px;text-align:left;vertical-align:top}
td.exp{max-width:880px}.valid{color:#080}.invalid{color:#c00;font-weight:bold}.unknown{color:#b60}
svg{display:block}svg text{font:10px monospace}pre{font-size:11px}p{margin:4px 0}.note{color:#555}`

// writePage writes report.html: verdicts, then a zoomed timeline around
// each invalid verdict's proof (so that the proof is the first thing seen),
// the run's timeline, latency and rate plots, and the proofs in full.
func writePage(w io.Writer, title string, events []history.Event, results []checker.Result, reg *registerLink) error {
	r := newRun(events, results)
	var b strings.Builder
	b.WriteString("<!DOCTYPE html><html><head><meta charset=\"utf-8\"><title>" + html.EscapeString(title) + "</title><style>" + style + "</style></head><body>")
	b.WriteString("<h1>" + html.EscapeString(title) + "</h1>")
	b.WriteString("<table><tr><th>checker</th><th>verdict</th><th>explanation</th></tr>")
	for _, res := range results {
		exp := res.Explanation
		if len(exp) > 260 {
			exp = exp[:250] + "… (in full below)"
		}
		fmt.Fprintf(&b, "<tr><td>%s</td><td class=%q>%s</td><td class=\"exp\">%s</td></tr>", html.EscapeString(res.Checker), res.Verdict, res.Verdict, html.EscapeString(exp))
	}
	b.WriteString("</table>")
	b.WriteString("<p>" + html.EscapeString(summary(events)) + "</p>")
	full := span{0, r.end}
	elements := 0
	for _, res := range results {
		if res.Verdict != checker.Invalid || len(res.Ops) == 0 {
			continue
		}
		sp := zoom(res, r.end)
		framed := ""
		if n := len(res.Overlaps); n > 0 {
			framed = fmt.Sprintf(" (%d overlaps, each framed in red on both holders' lanes)", n)
		}
		fmt.Fprintf(&b, "<h2 class=\"zoom-title\">Proof of %s invalid: %.3fs–%.3fs%s</h2>", html.EscapeString(res.Checker), sec(sp.t0), sec(sp.t1), framed)
		elements += r.timeline(&b, "zoom", sp, res.Ops)
	}
	if reg != nil {
		fmt.Fprintf(&b, "<p>Register %q: <a id=\"register-link\" href=%q>porcupine's visualization</a> of %d operations (#%d–#%d), faults as annotations%s.</p>",
			reg.view.Key, reg.file, reg.view.Operations, reg.view.First, reg.view.Last,
			map[bool]string{true: ", ending with the window no order linearizes", false: ""}[reg.view.Illegal])
		clients := make([]string, len(reg.view.Clients))
		for i, p := range reg.view.Clients {
			clients[i] = fmt.Sprintf("%d = p%d", i, p)
		}
		fmt.Fprintf(&b, "<p class=\"note\">Its clients are processes: %s.</p>", strings.Join(clients, ", "))
	}
	b.WriteString("<h2>Timeline</h2><p class=\"note\">" + legend + "</p>")
	elements += r.timeline(&b, "timeline", full, nil)
	b.WriteString("<h2>Acquire latency</h2><p class=\"note\">Each acquire's invoke to completion, at its invoke: ■ ok, ✕ fail, ▲ info; faults shaded in their lane's color.</p>")
	elements += r.latency(&b, full)
	b.WriteString("<h2>Acquisitions per second</h2><p class=\"note\">Acquires completed per second: green ok, grey fail or info; faults shaded.</p>")
	elements += r.rate(&b, full)
	r.proofs(&b, results)
	fmt.Fprintf(&b, "<p class=\"note\" id=\"elements\">%d SVG elements.</p></body></html>\n", elements)
	if _, err := io.WriteString(w, b.String()); err != nil {
		return fmt.Errorf("report: %w", err)
	}
	return nil
}

const legend = `Time runs left to right. Top lanes: one per fault kind, each fault a band with its name (hover for target and times). ` +
	`Below: client processes (a lane holds processes one after another, "p3 +4": p3 and four later ones). ` +
	`Blue band: a hold (acquire ok → release invoke or validity end). Bars: green ok, grey fail, orange info. ` +
	`Black outline: events that prove an invalid verdict; dashed red frame: two processes holding a key at once. ` +
	`Marks of one color closer than 3 pixels in a lane are merged (the tooltip counts them).`

// zoom is the time around an invalid result's proof: its events (and the
// end of a hold they start), with a quarter of that on each side.
func zoom(res checker.Result, end int64) span {
	lo, hi := res.Ops[0].TimeNS, res.Ops[0].TimeNS
	for _, e := range res.Ops {
		lo, hi = min(lo, e.TimeNS), max(hi, e.TimeNS, e.ValidUntilNS)
	}
	if len(res.Overlaps) > 0 {
		hi = min(hi, max(res.Overlaps[0].ToNS, lo)) // the first overlap, not every hold's deadline
		for _, e := range res.Overlaps[0].Ops {
			hi = max(hi, e.TimeNS)
		}
	}
	pad := max((hi-lo)/4, 50e6)
	return span{max(0, lo-pad), min(end, hi+pad)}
}

// proofs lists each invalid result's events and every overlap.
func (r *run) proofs(b *strings.Builder, results []checker.Result) {
	b.WriteString("<h2>Proof</h2>")
	for _, res := range results {
		if len(res.Ops) == 0 {
			continue
		}
		fmt.Fprintf(b, "<h3>%s</h3><p>%s</p><pre>", html.EscapeString(res.Checker), html.EscapeString(res.Explanation))
		for _, e := range res.Ops {
			b.WriteString(html.EscapeString(e.String()) + "\n")
		}
		b.WriteString("</pre>")
		if len(res.Overlaps) > 0 {
			fmt.Fprintf(b, "<p>%d overlaps (at most %d listed):</p><pre>", len(res.Overlaps), checker.MaxOverlaps)
			for i, o := range res.Overlaps {
				fmt.Fprintf(b, "%d. %s: p%d and p%d, %.3fs–%.3fs\n", i+1, html.EscapeString(o.Key), o.Processes[0], o.Processes[1], sec(o.FromNS), sec(o.ToNS))
			}
			b.WriteString("</pre>")
		}
	}
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
