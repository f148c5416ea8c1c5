package suite

import (
	"context"
	"errors"
	"os"
	"path/filepath"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
)

func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m,
		goleak.IgnoreTopFunction("internal/poll.runtime_pollWait"),
		goleak.IgnoreTopFunction("net/http.(*persistConn).writeLoop"),
	)
}

func TestBadConfig(t *testing.T) {
	ok := Config{Backend: Local, Workload: "lock", Time: 5 * time.Second, Clients: 2}
	cases := map[string]func(c *Config){
		"backend":  func(c *Config) { c.Backend = "cloud" },
		"clients":  func(c *Config) { c.Clients = 1 },
		"time":     func(c *Config) { c.Time = time.Second },
		"nemesis":  func(c *Config) { c.Nemeses = []string{"pause,meteor"} },
		"workload": func(c *Config) { c.Workload = "queue" },
		"clock-jump on docker": func(c *Config) {
			c.Backend, c.Nemeses = Docker, []string{"pause,clock-jump"}
		},
	}
	for name, mutate := range cases {
		c := ok
		mutate(&c)
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
	c := ok
	c.Workload = "semaphore"
	if _, err := Run(context.Background(), c); !errors.Is(err, workload.ErrUnsupported) {
		t.Errorf("semaphore: %v, want ErrUnsupported", err)
	}
}

// One short run on the Docker backend (CI has Docker: no daemon fails it):
// five master containers paused, cut off and restarted under the defaults;
// every checker must say valid, and the files must be written.
func TestDockerRun(t *testing.T) {
	out := t.TempDir()
	res, err := Run(context.Background(), Config{Backend: Docker, Workload: "register", Nemeses: []string{"pause,partition,restart"},
		Time: 6 * time.Second, Clients: 3, Seed: 31, Out: out})
	if err != nil {
		t.Fatalf("the Docker run needs a Docker daemon and the image (CI has both): %v", err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	for _, f := range []string{"pause", "partition", "restart"} {
		if res.Faults[f] == 0 {
			t.Errorf("%s never injected: %s", f, res.NemesisErrors)
		}
	}
	if res.Verdict != checker.Valid || res.Acquired == 0 {
		t.Errorf("verdict %s with %d acquisitions: %v", res.Verdict, res.Acquired, res.Results)
	}
	events, err := history.ReadFile(filepath.Join(out, "history.jsonl"))
	if err != nil || len(events) != len(res.Events) {
		t.Fatalf("history.jsonl: %d events, %v", len(events), err)
	}
	for _, f := range []string{"results.json", "report.html"} {
		if _, err := os.Stat(filepath.Join(out, f)); err != nil {
			t.Error(err)
		}
	}
}
