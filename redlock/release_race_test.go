package redlock

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A lease released at once after TryLock: the SET on the master that had
// not answered when the majority did may run after the release's delete
// (the two go out on different connections). Whether that SET had been
// answered must be judged from before the delete was sent, or its "not
// there" is taken as proof and the late key stays until its TTL (found by
// FuzzKey: about one lease in a thousand on three real masters).
func TestReleaseRightAfterLockLeavesNoKey(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	c := miniClient(t, cs)
	ctx := context.Background()
	const n = 600
	for k := range n {
		lease, err := c.TryLock(ctx, fmt.Sprintf("race:%d", k), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "no lock key left", func() bool {
		for _, m := range ms {
			for _, k := range m.Keys() {
				if strings.HasPrefix(k, "race:") {
					return false
				}
			}
		}
		return true
	})
}

// overtakeHook watches one master's pipelines: how many acquires are out,
// how many deletes were sent (release scripts and DELEX), and how many of
// them while an acquire was out. Once armed, it holds every acquire back
// for delay before sending it (a slow master, seen from the client).
type overtakeHook struct {
	delay      time.Duration
	armed      atomic.Bool
	mu         sync.Mutex
	acquiring  int
	overtaking int // deletes sent while an acquire was out
	deletes    int
}

func (h *overtakeHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *overtakeHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *overtakeHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		acq, del := 0, 0
		for _, cmd := range cmds {
			switch args := cmd.Args(); {
			case cmd.Name() == "delex":
				del++
			case len(args) > 1 && args[0] == "evalsha" && (args[1] == acquireScript.Hash() || args[1] == acquireManyScript.Hash()):
				acq++
			case len(args) > 1 && args[0] == "evalsha" && args[1] == releaseScript.Hash():
				del += len(lockKeys(releaseMerge, args))
			}
		}
		h.mu.Lock()
		if del > 0 && h.acquiring > 0 {
			h.overtaking += del
		}
		h.deletes += del
		h.acquiring += acq
		h.mu.Unlock()
		if acq > 0 && h.armed.Load() {
			time.Sleep(h.delay)
		}
		err := next(ctx, cmds)
		h.mu.Lock()
		h.acquiring -= acq
		h.mu.Unlock()
		return err
	}
}

// counts returns the deletes sent and those sent while an acquire was out.
func (h *overtakeHook) counts() (deletes, overtaking int) {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.deletes, h.overtaking
}

// A lease released while one master's SET is still out (the master is
// SIGSTOPped: TryLock returned with the others): the delete to that master
// waits for the SET's answer instead of racing it on the batcher's other
// connection, so the master runs it after the SET and one delete removes
// the key, with nothing left for a background check.
func TestReleaseWaitsForTheLastSET(t *testing.T) {
	r := newRig(t, 3, withRedisOptions(patientClients))
	hook := &overtakeHook{}
	r.clients[2].AddHook(hook)
	c := r.client(t, WithMasterTimeout(10*time.Second))
	warmUpEverywhere(t, r, c)
	pause(t, r, 2)
	lockAndRelease(t, c, "behind", time.Minute)
	resume(t, r, 2)
	gone(t, r.clients, "behind")
	if deletes, overtaking := hook.counts(); overtaking != 0 || deletes != 2 { // the warm-up's and ours
		t.Fatalf("master 2 got %d deletes, %d of them while an acquire was out; want 2, none", deletes, overtaking)
	}
}

// One goroutine locking and releasing at once asks each master for each
// lease once and sends it one delete, nothing more (no delete sent again
// because it overtook its SET; with the deletes sent at once, 1,000 leases
// on five masters gave a few extra each). Acquires are counted by the locks
// they ask for: a slow master may get two in one merged call.
func TestReleaseAfterLockSendsOneDeletePerMaster(t *testing.T) {
	r := newRig(t, 5)
	acquires := make([]*scriptCounter, len(r.clients))
	deletes := make([]*scriptCounter, len(r.clients))
	for i, rc := range r.clients {
		acquires[i] = acquireCounter()
		deletes[i] = releaseCounter()
		rc.AddHook(acquires[i])
		rc.AddHook(deletes[i])
	}
	c := r.client(t)
	warmUp(t, c)
	gone(t, r.clients, "warmup")
	for i := range r.clients {
		acquires[i].n.Store(0)
		deletes[i].n.Store(0)
	}
	const n = 1000
	for i := range n {
		lockAndRelease(t, c, fmt.Sprintf("once:%d", i), 10*time.Second)
	}
	for i := range n {
		gone(t, r.clients, fmt.Sprintf("once:%d", i))
	}
	for j := range r.clients {
		if a, d := acquires[j].n.Load(), deletes[j].n.Load(); a != n || d != n {
			t.Errorf("master %d: %d locks asked for and %d deletes for %d leases; want %d of each", j, a, d, n, n)
		}
	}
}

// A program that releases and closes at once leaves no key behind: the
// delete to a master whose SET was still out (SIGSTOPped, resumed while
// Close waits) is sent and answered before Close returns, not dropped with
// the batchers.
func TestCloseSendsTheDeletesOfReleasedLeases(t *testing.T) {
	r := newRig(t, 3, withRedisOptions(patientClients))
	c, err := New(r.clients, WithoutQuarantine(), WithMasterTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	warmUpEverywhere(t, r, c)
	pause(t, r, 2)
	lockAndRelease(t, c, "closing", time.Minute)
	time.AfterFunc(300*time.Millisecond, func() { _ = r.Servers[2].Resume() })
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if vals := r.values(t, "closing"); countNonEmpty(vals) != 0 {
		t.Fatalf("after Release and Close: %q left", vals)
	}
}

// warmUpEverywhere is warmUp with a TTL longer than any per-master timeout,
// waiting until the warm-up key is gone from every master: each master has
// answered c once.
func warmUpEverywhere(t *testing.T, r *rig, c *Client) {
	t.Helper()
	lockAndRelease(t, c, "warm-up", time.Minute)
	gone(t, r.clients, "warm-up")
}
