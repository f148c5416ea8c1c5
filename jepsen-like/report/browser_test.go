package report

import (
	"bytes"
	"context"
	"image/png"
	"os"
	"os/exec"
	"path/filepath"
	"testing"

	"github.com/chromedp/chromedp"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
)

// chromium finds Debian's chromium (make deps installs it). Missing, the
// test fails: CI installs it, so a skip would hide a broken install.
func chromium(t *testing.T) string {
	t.Helper()
	for _, name := range []string{"chromium", "chromium-browser"} {
		if p, err := exec.LookPath(name); err == nil {
			return p
		}
	}
	t.Fatal("chromium not found: `make deps` installs it (apt-get install -y chromium)")
	return ""
}

// browser starts a headless chromium with a 1280×800 window, stopped at
// the end of the test.
func browser(t *testing.T) context.Context {
	t.Helper()
	opts := append(chromedp.DefaultExecAllocatorOptions[:], chromedp.ExecPath(chromium(t)),
		chromedp.WindowSize(1280, 800), chromedp.UserDataDir(t.TempDir()), chromedp.Flag("hide-scrollbars", true))
	if os.Geteuid() == 0 {
		opts = append(opts, chromedp.NoSandbox) // chromium refuses root with its sandbox
	}
	alloc, cancelAlloc := chromedp.NewExecAllocator(context.Background(), opts...)
	ctx, cancel := chromedp.NewContext(alloc)
	t.Cleanup(func() { cancel(); cancelAlloc() })
	if err := chromedp.Do(ctx, chromedp.EmulateViewport(1280, 800)); err != nil {
		t.Fatal(err)
	}
	return ctx
}

type box struct{ Left, Top, Right, Bottom float64 }

// layout is what the page shows, measured by the browser.
type layout struct {
	Width, Height   float64
	ScrollY         float64
	Proof, Overlaps []box // in the zoom
	OverlapIDs      []string
	FullOverlaps    int // in the full timeline
	ProofHit        []bool
	Faults          []struct {
		Kind  string
		Band  box
		Label *box // nil: no label of its kind near the band
		Text  string
	}
}

const measure = `(() => {
  const r = e => { const b = e.getBoundingClientRect(); return {Left: b.left, Top: b.top, Right: b.right, Bottom: b.bottom} };
  const zoom = document.querySelector('svg.zoom');
  const out = {Width: innerWidth, Height: innerHeight, ScrollY: scrollY, Proof: [], Overlaps: [], OverlapIDs: [], ProofHit: [], Faults: []};
  if (!zoom) return out;
  for (const e of zoom.querySelectorAll('.proof')) out.Proof.push(r(e));
  for (const g of zoom.querySelectorAll('g.overlap')) {
    out.Overlaps.push(r(g)); out.OverlapIDs.push(g.dataset.overlap);
    const b = g.querySelector('rect').getBoundingClientRect();
    const hit = document.elementFromPoint((b.left + b.right) / 2, (b.top + b.bottom) / 2);
    out.ProofHit.push(!!hit && zoom.contains(hit) && getComputedStyle(g.querySelector('rect')).strokeWidth !== '0px');
  }
  out.FullOverlaps = document.querySelectorAll('svg.timeline g.overlap').length;
  for (const svg of document.querySelectorAll('svg.zoom, svg.timeline')) {
    const labels = [...svg.querySelectorAll('text.fault-label')];
    for (const band of svg.querySelectorAll('rect.fault')) {
      const b = r(band);
      const f = {Kind: band.dataset.fault, Band: b, Label: null, Text: ''};
      for (const l of labels) {
        const t = r(l), st = getComputedStyle(l);
        const near = t.Left >= b.Left - 1 && t.Left <= b.Right + 8 && t.Top < b.Bottom && t.Bottom > b.Top;
        if (near && l.dataset.fault === f.Kind && st.visibility === 'visible' && st.display !== 'none' && st.opacity !== '0' && t.Right > t.Left) {
          f.Label = t; f.Text = l.textContent; break;
        }
      }
      out.Faults.push(f);
    }
  }
  return out;
})()`

func inside(b box, w, h float64) bool {
	return b.Left >= 0 && b.Top >= 0 && b.Right <= w && b.Bottom <= h && b.Right > b.Left && b.Bottom > b.Top
}

// TestReportInABrowser loads report.html of a broken run (three holders of
// k at once during a restart, and a pause, a partition and a kill) in
// headless chromium at 1280×800: the proof and every overlap are framed in
// the first screen, each fault band carries its name, and porcupine's
// register.html draws the register and the faults.
func TestReportInABrowser(t *testing.T) {
	if testing.Short() {
		t.Skip("starts chromium")
	}
	events := brokenRun()
	results := checker.Run(events)
	var overlaps int
	for _, r := range results {
		overlaps += len(r.Overlaps)
	}
	if overlaps != 3 {
		t.Fatalf("the broken run has %d overlaps, want 3: %v", overlaps, results)
	}
	dir := t.TempDir()
	if err := WriteDir(dir, "broken run", events, results); err != nil {
		t.Fatal(err)
	}
	ctx := browser(t)
	if err := chromedp.Do(ctx, chromedp.Navigate("file://"+filepath.Join(dir, "report.html")), chromedp.WaitVisible(chromedp.CSS("svg.zoom"))); err != nil {
		t.Fatal(err)
	}
	got, err := chromedp.Run(ctx, chromedp.Evaluate[layout](measure))
	if err != nil {
		t.Fatal(err)
	}
	if got.Width != 1280 || got.Height != 800 || got.ScrollY != 0 {
		t.Fatalf("viewport %v×%v scrolled to %v, want 1280×800 at the top", got.Width, got.Height, got.ScrollY)
	}
	if len(got.Proof) == 0 {
		t.Fatal("no proof outlined in the zoom")
	}
	for i, b := range append(got.Proof, got.Overlaps...) {
		if !inside(b, got.Width, got.Height) {
			t.Errorf("proof mark %d at %+v is not within the 1280×800 window without scrolling", i, b)
		}
	}
	if len(got.Overlaps) != overlaps || got.FullOverlaps != overlaps {
		t.Errorf("%d overlaps framed in the zoom and %d in the timeline, want %d in each", len(got.Overlaps), got.FullOverlaps, overlaps)
	}
	for i, id := range got.OverlapIDs {
		if id != string(rune('0'+i)) || !got.ProofHit[i] {
			t.Errorf("overlap frame %d: id %q, visible and outlined %v", i, id, got.ProofHit[i])
		}
	}
	kinds := map[string]int{}
	for _, f := range got.Faults {
		kinds[f.Kind]++
		if f.Label == nil {
			t.Errorf("fault band %s at %+v has no visible name beside it", f.Kind, f.Band)
		} else if len(f.Text) < len(f.Kind) || f.Text[:len(f.Kind)] != f.Kind {
			t.Errorf("fault band %s is labelled %q", f.Kind, f.Text)
		}
	}
	for _, k := range []string{"pause", "restart", "partition", "kill"} {
		if kinds[k] == 0 {
			t.Errorf("no %s band drawn: %v", k, kinds)
		}
	}
	shot, err := chromedp.Run(ctx, chromedp.CaptureScreenshot())
	if err != nil {
		t.Fatal(err)
	}
	img, err := png.Decode(bytes.NewReader(shot))
	if err != nil || img.Bounds().Dx() != 1280 || img.Bounds().Dy() != 800 {
		t.Fatalf("screenshot: %v, %v", err, img.Bounds())
	}
	out := filepath.Join(t.ArtifactDir(), "report.png")
	if err := os.WriteFile(out, shot, 0o644); err != nil {
		t.Fatal(err)
	}
	t.Logf("screenshot: %s", out)

	// porcupine's page: its script draws the register's operations and
	// each fault as an annotation in a row of its kind.
	if err := chromedp.Do(ctx, chromedp.Click(chromedp.CSS("#register-link")), chromedp.WaitVisible(chromedp.CSS("#canvas svg"))); err != nil {
		t.Fatal(err)
	}
	texts, err := chromedp.Run(ctx, chromedp.Evaluate[[]string](`[...document.querySelectorAll('#canvas svg text')].map(t => t.textContent)`))
	if err != nil {
		t.Fatal(err)
	}
	for _, want := range []string{"w a t1", "r → a t1", "w b2 t2 rejected", "fault: pause", "pause m1", "fault: restart", "restart m2"} {
		found := false
		for _, s := range texts {
			found = found || s == want
		}
		if !found {
			t.Errorf("porcupine's visualization lacks %q: %q", want, texts)
		}
	}
}
