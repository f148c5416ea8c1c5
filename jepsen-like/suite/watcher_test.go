package suite

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// A data-loss episode keeps one long-lived client (issue 18 §2): the
// process alive at the episode's watcher event (it connected to and probed
// every master before the loss, so its learned lineages and token cache
// come from before) competes after the master restarted empty, beside the
// fresh ones; the defaults stay valid. With Rejoin replacing the kept
// process too, that process invokes nothing after the restart.
func TestWatcherLivesThroughTheLoss(t *testing.T) {
	res := runFaultValid(t, generator.Restart, 6*time.Second)
	var watcher int
	var kept, restarted int64 = -1, -1
	for _, e := range res.Events {
		if e.Process != history.NemesisProcess || e.F != history.Nemesis {
			continue
		}
		if kept < 0 && strings.HasPrefix(e.Value, generator.Restart+" watcher p") {
			kept = e.TimeNS
			p, err := strconv.Atoi(strings.TrimPrefix(e.Value, generator.Restart+" watcher p"))
			if err != nil {
				t.Fatalf("watcher event %q", e.Value)
			}
			watcher = p
		}
		if kept >= 0 && e.Value == generator.Restart+" start" {
			restarted = e.TimeNS
			break
		}
	}
	if kept < 0 || restarted < 0 {
		t.Fatalf("watcher event at %d, restart at %d", kept, restarted)
	}
	var before, after int
	for _, e := range res.Events {
		if e.F != history.Acquire || e.Process != watcher {
			continue
		}
		if e.Type == history.Invoke && e.TimeNS < kept {
			before++
		} else if e.TimeNS > restarted {
			after++ // an attempt it invoked, or one that ended, after the loss
		}
	}
	t.Logf("process %d, alive at the watcher event: %d acquisitions invoked before it, %d acquire events after the restart", watcher, before, after)
	if after == 0 {
		t.Fatalf("the watcher, process %d, has no acquire event after the restart", watcher)
	}
}
