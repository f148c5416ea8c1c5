package report

import (
	"bytes"
	"strings"
	"testing"

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
