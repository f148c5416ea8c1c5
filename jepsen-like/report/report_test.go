package report

import (
	"bytes"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestReportIsSelfContained(t *testing.T) {
	events := []history.Event{
		{Index: 0, Process: 0, Type: history.Invoke, F: history.Acquire, Key: "k", TimeNS: 0},
		{Index: 1, Process: 0, Type: history.OK, F: history.Acquire, Key: "k", Token: 1, TimeNS: 10e6, ValidUntilNS: 900e6},
		{Index: 2, Process: -1, Type: history.Info, F: history.Nemesis, Key: "m0", Value: "restart start", TimeNS: 20e6},
		{Index: 3, Process: 1, Type: history.Invoke, F: history.Acquire, Key: "k", TimeNS: 30e6},
		{Index: 4, Process: 1, Type: history.OK, F: history.Acquire, Key: "k", Token: 2, TimeNS: 40e6, ValidUntilNS: 950e6},
		{Index: 5, Process: -1, Type: history.Info, F: history.Nemesis, Key: "m0", Value: "restart stop", TimeNS: 50e6},
		{Index: 6, Process: 0, Type: history.Invoke, F: history.Release, Key: "k", TimeNS: 500e6},
		{Index: 7, Process: 0, Type: history.Fail, F: history.Release, Key: "k", Value: "error: <lost>", TimeNS: 510e6},
	}
	results := checker.Run(events)
	var b bytes.Buffer
	if err := Write(&b, "run <1>", events, results); err != nil {
		t.Fatal(err)
	}
	s := b.String()
	for _, want := range []string{"<svg", "2 processes, 2 acquisitions (0 attempts failed); faults: restart ×1", "restart m0", "mutex", "invalid", "p0", "p1", "run &lt;1&gt;", "error: &lt;lost&gt;", `stroke="#000"`} {
		if !strings.Contains(s, want) {
			t.Errorf("report lacks %q", want)
		}
	}
	for _, bad := range []string{"<script", "http://", "https://", `src="`, "<link"} {
		if bad == "http://" && strings.Count(s, "http://") == strings.Count(s, `xmlns="http://www.w3.org/2000/svg"`) {
			continue
		}
		if strings.Contains(s, bad) {
			t.Errorf("report has %q: it must be self-contained", bad)
		}
	}
}

// A 5-minute run of 10 clients (about 40,000 events) gives a bounded page:
// marks closer than a pixel merge, latency marks thin out, and the
// register's visualization draws at most registerOps operations.
func TestLongRunReportIsBounded(t *testing.T) {
	events := longRun(5*time.Minute, 10)
	results := checker.Run(events)
	if v := checker.Overall(results); v != checker.Valid {
		t.Fatalf("the long run is %s: %v", v, results)
	}
	dir := t.TempDir()
	if err := WriteDir(dir, "long run", events, results); err != nil {
		t.Fatal(err)
	}
	page, err := os.ReadFile(filepath.Join(dir, "report.html"))
	if err != nil {
		t.Fatal(err)
	}
	reg, err := os.ReadFile(filepath.Join(dir, RegisterFile))
	if err != nil {
		t.Fatal(err)
	}
	elements := strings.Count(string(page), "<rect") + strings.Count(string(page), "<text") + strings.Count(string(page), "<line") + strings.Count(string(page), "<path")
	t.Logf("%d events: report.html %d bytes, %d SVG elements; register.html %d bytes", len(events), len(page), elements, len(reg))
	if len(page) > 600_000 || elements > 5_000 {
		t.Errorf("report.html of a 5-minute run: %d bytes, %d elements; want at most 600 kB and 5,000", len(page), elements)
	}
	if len(reg) > 200_000 {
		t.Errorf("register.html of a 5-minute run: %d bytes, want at most 200 kB", len(reg))
	}
	for _, kind := range []string{"pause", "kill", "partition", "restart", "data-loss"} {
		if !strings.Contains(string(page), `class="lane-label">`+kind+`<`) {
			t.Errorf("no lane for %s", kind)
		}
	}
}

// A stale read: register.html draws the window no order linearizes, and
// report.html zooms on the fenced-register proof.
func TestRegisterViewShowsTheFailingWindow(t *testing.T) {
	var b builder
	b.acquire(0, 0, 10*ms, 1, 900*ms)
	b.op(0, history.Write, "r", history.OK, 20*ms, 30*ms, 1, "a")
	b.fault("pause", "m0", 35*ms, 90*ms)
	b.op(0, history.Write, "r", history.OK, 40*ms, 50*ms, 1, "b")
	b.op(0, history.Read, "r", history.OK, 60*ms, 70*ms, 1, "a") // stale
	results := checker.Run(b.events)
	var reg checker.Result
	for _, r := range results {
		if r.Checker == "fenced-register" {
			reg = r
		}
	}
	if reg.Verdict != checker.Invalid {
		t.Fatalf("fenced-register: %v", reg)
	}
	dir := t.TempDir()
	if err := WriteDir(dir, "stale read", b.events, results); err != nil {
		t.Fatal(err)
	}
	page, _ := os.ReadFile(filepath.Join(dir, "report.html"))
	vis, _ := os.ReadFile(filepath.Join(dir, RegisterFile))
	for _, want := range []string{"Proof of fenced-register invalid", `class="zoom"`, "ending with the window no order linearizes", `href="register.html"`} {
		if !strings.Contains(string(page), want) {
			t.Errorf("report.html lacks %q", want)
		}
	}
	for _, want := range []string{`"Tag":"fault: pause"`, `"Description":"pause m0"`, `r → a t1`} {
		if !strings.Contains(string(vis), want) {
			t.Errorf("register.html lacks %q", want)
		}
	}
}
