package suite

import (
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// The bridge on real servers, set workload: while it lasts, a process of
// one half holds the lock on its bare majority (the bridge master among
// them) and a process of the other half begins an attempt within that
// hold. Its first round reaches the bridge, taken, and the two masters
// only its half reaches: two grants, short of the quorum of three, so it
// waits for the release, and every checker is valid. With a quorum one too
// small (jepsen-like mutants --only quorum-1, bridge in the default mix)
// that round takes the lock: mutex and set invalid.
func TestBridgeContestsAcrossTheHalves(t *testing.T) {
	const clients = 4
	res := runFaultValid(t, generator.Bridge, 6*time.Second)
	type window struct{ from, to int64 }
	var windows []window     // every bridge, start to stop
	half := map[int]string{} // slot → the masters it cannot reach (the same split each time: one seed)
	for _, e := range res.Events {
		switch {
		case e.F == history.Nemesis && e.Value == generator.Bridge+" start":
			windows = append(windows, window{from: e.TimeNS, to: -1})
			for _, part := range strings.Fields(e.Key) { // "c<slot>-/-m<i>,m<j>"
				slot, cut, _ := strings.Cut(strings.TrimPrefix(part, "c"), "-/-")
				s, _ := strconv.Atoi(slot)
				half[s] = cut
			}
		case e.F == history.Nemesis && e.Value == generator.Bridge+" stop" && len(windows) > 0:
			windows[len(windows)-1].to = e.TimeNS
		}
	}
	slotOf := func(p int) int { return p % clients }
	contested := 0
	for _, h := range checker.Holds(res.Events) {
		for _, w := range windows {
			// the part of the hold while this bridge stood
			lo, hi := max(h.Start, w.from), min(h.End, w.to)
			if h.Limit != 0 || lo >= hi {
				continue
			}
			for _, e := range res.Events {
				if e.F == history.Acquire && e.Type == history.Invoke && e.TimeNS > lo && e.TimeNS < hi &&
					half[slotOf(e.Process)] != half[slotOf(h.Process)] {
					contested++
				}
			}
		}
	}
	t.Logf("%d attempts began within a hold of the other half", contested)
	if contested == 0 {
		t.Error("no attempt of one half ran within a hold of the other: a quorum of two would not have been tried")
	}
}
