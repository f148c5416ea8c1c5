package suite

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
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
		"backend":                func(c *Config) { c.Backend = "cloud" },
		"clients":                func(c *Config) { c.Clients = 1 },
		"time":                   func(c *Config) { c.Time = time.Second },
		"nemesis":                func(c *Config) { c.Nemeses = []string{"pause,meteor"} },
		"workload":               func(c *Config) { c.Workload = "queue" },
		"net-partition on local": func(c *Config) { c.Nemeses = []string{"pause,net-partition"} },
		"bucket keys negative":   func(c *Config) { c.BucketKeys = -1 },
		"bucket keys semaphore":  func(c *Config) { c.BucketKeys, c.Workload = 2, "semaphore" },
		"bucket keys no fencing": func(c *Config) { c.BucketKeys, c.NoFencing = 2, true },
	}
	for name, mutate := range cases {
		c := ok
		mutate(&c)
		if _, err := Run(context.Background(), c); err == nil {
			t.Errorf("%s: accepted", name)
		}
	}
}

// One short run on the Docker backend (CI has Docker: no daemon fails it):
// five master containers paused, clients cut off by the proxy, masters cut
// off the network (net-partition) and restarted under the defaults;
// every checker must say valid, and the files must be written.
func TestDockerRun(t *testing.T) {
	out := t.TempDir()
	res, err := Run(context.Background(), Config{Backend: Docker, Workload: "register", Nemeses: []string{"pause,partition,net-partition,restart"},
		Time: 6 * time.Second, Clients: 3, Seed: 31, Out: out})
	if err != nil {
		t.Fatalf("the Docker run needs a Docker daemon and the image (CI has both): %v", err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	for _, f := range []string{"pause", "partition", "net-partition", "restart"} {
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

// A master container's clock jumps forward (the clock shim preloaded into
// the containers): as on the local backend (docs/jepsen-like.md, the
// clock-jump row), the key expires early on that master and a second
// client takes the lock while the first holds it, with the defaults too;
// the fenced store still refuses the older holder.
func TestDockerClockJump(t *testing.T) {
	res, err := Run(context.Background(), Config{Backend: Docker, Workload: "register", Nemeses: []string{"clock-jump"},
		Time: 4 * time.Second, Clients: 4, Seed: 17})
	if err != nil {
		t.Fatalf("the Docker run needs a Docker daemon and the image (CI has both): %v", err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	if res.Faults["clock-jump"] == 0 {
		t.Fatalf("clock-jump never injected: %s", res.NemesisErrors)
	}
	for _, r := range res.Results {
		switch want := map[string]checker.Verdict{"mutex": checker.Invalid, "fenced-register": checker.Valid}[r.Checker]; {
		case want != "" && r.Verdict != want:
			t.Errorf("%s: %s (%s), want %s", r.Checker, r.Verdict, r.Explanation, want)
		}
	}
}

// Jepsen's bridge and ring shapes of partition, on what each client reaches
// (local masters): both injected, the defaults valid.
func TestBridgeAndRingPartitions(t *testing.T) {
	res, err := Run(context.Background(), Config{Backend: Local, Workload: "register", Nemeses: []string{"bridge,ring"},
		Time: 4 * time.Second, Clients: 4, Seed: 33})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("%d acquisitions, faults %v: %s", res.Acquired, res.Faults, checker.Summary(res.Results))
	if res.Faults["bridge"] == 0 || res.Faults["ring"] == 0 {
		t.Fatalf("faults injected %v, want bridge and ring: %s", res.Faults, res.NemesisErrors)
	}
	if res.Verdict != checker.Valid || res.Acquired == 0 {
		t.Fatalf("verdict %s with %d acquisitions: %v", res.Verdict, res.Acquired, res.Results)
	}
}

// The semaphore workload: permits of a two-holder semaphore kept as Redlock
// slots on five local masters, one master paused on the way.
func TestSemaphoreWorkload(t *testing.T) {
	res, err := Run(context.Background(), Config{Backend: Local, Workload: "semaphore", Nemeses: []string{"pause"},
		Time: 4 * time.Second, Clients: 4, Seed: 32})
	if err != nil {
		t.Fatal(err)
	}
	var sem checker.Result
	for _, r := range res.Results {
		if r.Checker == "semaphore" {
			sem = r
		}
	}
	if sem.Verdict != checker.Valid || res.Acquired == 0 || res.Faults["pause"] == 0 {
		t.Fatalf("semaphore %s (%s), %d acquisitions, faults %v", sem.Verdict, sem.Explanation, res.Acquired, res.Faults)
	}
	if !strings.Contains(sem.Explanation, "never above the limit") {
		t.Fatalf("the semaphore checker saw no permit: %s", sem.Explanation)
	}
}
