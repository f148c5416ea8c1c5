package e2e_test

import (
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// nemesis injects faults into a minority of masters at random: SIGSTOP for a
// while, SIGKILL and a restart without persistence after a while, or an
// immediate restart without persistence. At most maxFaulty masters are
// faulted at once, and a master that lost its data counts as faulted until it
// could have rejoined (rejoin: its quarantine and counter sync). That is the
// fault model: a majority losing its data within one quarantine would take
// the counters with it, whatever the protocol.
type nemesis struct {
	t         *testing.T
	masters   *clustertest.Cluster
	rng       *rand.Rand
	maxFaulty int
	rejoin    time.Duration

	mu                      sync.Mutex
	faulty                  map[int]bool
	next                    int // the kind of the next fault
	pauses, kills, restarts int
	wg                      sync.WaitGroup
}

func newNemesis(t *testing.T, masters *clustertest.Cluster, seed uint64, rejoin time.Duration) *nemesis {
	t.Logf("nemesis seed %d", seed)
	return &nemesis{
		t: t, masters: masters, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)), rejoin: rejoin,
		maxFaulty: (len(masters.Servers) - 1) / 2, faulty: make(map[int]bool),
	}
}

// run injects faults every 200–600 ms until stop is closed, then heals every
// master and waits for its fault goroutines.
func (n *nemesis) run(stop <-chan struct{}) {
	defer func() {
		n.wg.Wait()
		n.masters.ResumeAll()
	}()
	for {
		select {
		case <-stop:
			return
		case <-time.After(time.Duration(200+n.rng.IntN(400)) * time.Millisecond):
		}
		n.mu.Lock()
		if len(n.faulty) >= n.maxFaulty {
			n.mu.Unlock()
			continue
		}
		i := n.rng.IntN(len(n.masters.Servers))
		if n.faulty[i] {
			n.mu.Unlock()
			continue
		}
		n.faulty[i] = true
		// The kinds of fault take turns so that every run has each of them;
		// which master and for how long are random.
		action, hold := n.next%3, time.Duration(50+n.rng.IntN(400))*time.Millisecond
		n.next++
		n.mu.Unlock()
		n.wg.Go(func() { n.fault(i, action, hold, stop) })
	}
}

func (n *nemesis) fault(i, action int, hold time.Duration, stop <-chan struct{}) {
	s := n.masters.Servers[i]
	defer func() {
		n.mu.Lock()
		delete(n.faulty, i)
		n.mu.Unlock()
	}()
	wait := func(d time.Duration) {
		select {
		case <-stop:
		case <-time.After(d):
		}
	}
	switch action {
	case 0:
		if err := s.Pause(); err != nil {
			n.t.Errorf("pause master %d: %v", i, err)
			return
		}
		n.count(&n.pauses)
		wait(hold)
		if err := s.Resume(); err != nil {
			n.t.Errorf("resume master %d: %v", i, err)
		}
	case 1:
		if err := s.Kill(); err != nil {
			n.t.Errorf("kill master %d: %v", i, err)
			return
		}
		n.count(&n.kills)
		wait(hold)
		if err := s.Restart(clustertest.NoPersistence); err != nil {
			n.t.Errorf("restart master %d: %v", i, err)
		}
		wait(n.rejoin)
	default:
		if err := s.Restart(clustertest.NoPersistence); err != nil {
			n.t.Errorf("restart master %d: %v", i, err)
			return
		}
		n.count(&n.restarts)
		wait(n.rejoin)
	}
}

func (n *nemesis) count(c *int) {
	n.mu.Lock()
	*c++
	n.mu.Unlock()
}
