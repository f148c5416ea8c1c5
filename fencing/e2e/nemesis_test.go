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
// faulted at once.
type nemesis struct {
	t         *testing.T
	masters   *clustertest.Cluster
	rng       *rand.Rand
	maxFaulty int

	mu                      sync.Mutex
	faulty                  map[int]bool
	pauses, kills, restarts int
	wg                      sync.WaitGroup
}

func newNemesis(t *testing.T, masters *clustertest.Cluster, seed uint64) *nemesis {
	t.Logf("nemesis seed %d", seed)
	return &nemesis{
		t: t, masters: masters, rng: rand.New(rand.NewPCG(seed, seed^0x9e3779b97f4a7c15)),
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
		action, hold := n.rng.IntN(3), time.Duration(50+n.rng.IntN(400))*time.Millisecond
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
	wait := func() {
		select {
		case <-stop:
		case <-time.After(hold):
		}
	}
	switch action {
	case 0:
		if err := s.Pause(); err != nil {
			n.t.Errorf("pause master %d: %v", i, err)
			return
		}
		n.count(&n.pauses)
		wait()
		if err := s.Resume(); err != nil {
			n.t.Errorf("resume master %d: %v", i, err)
		}
	case 1:
		if err := s.Kill(); err != nil {
			n.t.Errorf("kill master %d: %v", i, err)
			return
		}
		n.count(&n.kills)
		wait()
		if err := s.Restart(clustertest.NoPersistence); err != nil {
			n.t.Errorf("restart master %d: %v", i, err)
		}
	default:
		if err := s.Restart(clustertest.NoPersistence); err != nil {
			n.t.Errorf("restart master %d: %v", i, err)
			return
		}
		n.count(&n.restarts)
	}
}

func (n *nemesis) count(c *int) {
	n.mu.Lock()
	*c++
	n.mu.Unlock()
}
