package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// probeInFlight reads master i's probe bookkeeping: whether a probe is in
// flight, when it (or else the last one) was sent, and the last probe's error.
func probeInFlight(c *Client, i int) (inFlight bool, sentAt time.Time, err error) {
	m := c.masters[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.health.probing, m.health.sentAt, m.health.state.Err
}

// patientClients lets only the per-master timeout end a command: the
// go-redis read and write timeouts of the test clients (1 s) would end a
// stalled master's probe long before it.
func patientClients(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute }

// staleProbeClient is a Client with quarantine on, a clock only the test
// moves and a per-master timeout far longer than any test step (so a probe
// that is stuck stays in flight), over five durable masters marked by a
// first lock at the clock's start: every master then counts by itself.
func staleProbeClient(t *testing.T, masters []redis.UniversalClient) (*Client, *fakeClock) {
	t.Helper()
	clk := newFakeClock()
	c, err := New(masters, WithClock(clk), WithMasterTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	l, err := c.TryLock(ctx, "warmup", time.Minute) // first contact: waits for every probe, marks the cluster
	if err != nil {
		t.Fatalf("warm-up lock on a fresh durable cluster: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range c.Health() {
		if h.Quarantined {
			t.Fatalf("after the warm-up: %+v; want every master counting", h)
		}
	}
	return c, clk
}

// A master stalled (SIGSTOP) right after it answered a probe. Half an
// interval later the next attempt starts its probe in the background and
// does not wait for it: the master still counts, its last answered probe
// being half a second old. Past a second it no longer counts by itself, and
// the attempt still does not wait for its probe, the four others being known
// good (their probes of t0+0.5s answered). Each TryLock returns while that probe is provably in flight: the
// master cannot answer it, and its timeout (20 s) has not passed.
func TestStalledMasterProbeIsNotWaitedFor(t *testing.T) {
	ctx := context.Background()
	r := &rig{Cluster: clustertest.Start(t, 5, clustertest.AOFAlways)}
	t.Cleanup(r.ResumeAll)
	r.clients = r.Clients(t, patientClients)
	c, clk := staleProbeClient(t, r.clients)
	t0 := clk.Now()
	pause(t, r, 4)
	t.Cleanup(func() { _ = r.Servers[4].Resume() }) // before Close, which waits for the stuck commands

	clk.Advance(probeInterval / 2)
	if _, err := c.TryLock(ctx, "a", time.Minute); err != nil {
		t.Fatalf("TryLock half a second after master 4 stalled: %v", err)
	}
	inFlight, sentAt, err := probeInFlight(c, 4)
	if !inFlight || !sentAt.Equal(t0.Add(probeInterval/2)) || err != nil {
		t.Fatalf("master 4: probe in flight %v, sent at t0+%v, error %v; want its background probe started at t0+%v, not answered",
			inFlight, sentAt.Sub(t0), err, probeInterval/2)
	}
	if h := c.Health()[4]; h.Quarantined {
		t.Fatalf("master 4 half a second after its last answered probe: %+v; want it counting", h)
	}
	// The attempt did not wait for the four live masters' background probes
	// either; let them answer (they are not stalled) so that, once the clock
	// passes a second, those four count on probes sent at t0+0.5s.
	eventually(t, 10*time.Second, "masters 0 to 3 answer their background probes", func() bool {
		for i := 0; i < 4; i++ {
			if inFlight, _, err := probeInFlight(c, i); inFlight || err != nil {
				return false
			}
		}
		return true
	})

	clk.Advance(probeInterval/2 + time.Millisecond) // master 4's last answered probe (t0) is now stale
	if _, err := c.TryLock(ctx, "b", time.Minute); err != nil {
		t.Fatalf("TryLock with master 4 stale and its probe stuck: %v", err)
	}
	inFlight, sentAt, err = probeInFlight(c, 4)
	if !inFlight || !sentAt.Equal(t0.Add(probeInterval/2)) || err != nil {
		t.Fatalf("master 4 after the second TryLock: probe in flight %v, sent at t0+%v, error %v; want the same probe still pending",
			inFlight, sentAt.Sub(t0), err)
	}
	for i, h := range c.Health() {
		switch {
		case i == 4 && (!h.Quarantined || !errors.Is(h.Err, ErrStaleProbe) || !errors.Is(h.Err, ErrQuarantined) || h.Reason == ""):
			t.Fatalf("stalled master's Health: %+v; want it not counting by itself, with ErrStaleProbe", h)
		case i < 4 && h.Quarantined:
			t.Fatalf("master %d: %+v; want it counting", i, h)
		}
	}
	el := c.electorate(ctx) // what the next attempt sees: master 4 asked, not counting by itself
	asked := false
	for _, i := range el.send {
		asked = asked || i == 4
	}
	var me *MasterError
	if el.votes[4] || !asked || el.mayVote != 4 || len(el.errs) != 1 || !errors.As(el.errs[0], &me) || me.Master != 4 ||
		!errors.Is(me, ErrStaleProbe) {
		t.Fatalf("electorate: send %v, votes %v, may vote %d, errors %v; want master 4 asked, not counting, ErrStaleProbe",
			el.send, el.votes, el.mayVote, el.errs)
	}
	if inFlight, _, _ := probeInFlight(c, 4); !inFlight {
		t.Fatal("master 4's probe answered while it was stopped")
	}
}

// A master counts by itself only on a probe sent at most a second ago.
// Masters 2, 3 and 4 answer every command but their probes, which are held:
// their last answered probe is over a second old and the probes in flight
// were sent over a second ago, so no answer to them could let them count,
// and the attempt does not wait for them. Masters 0 and 1 are probed again
// and waited for (they would count). Two masters count: a round that
// masters 0 to 3 grant and master 4 refuses fails with ErrNotAcquired
// (plain Redlock, counting every master, takes the same key on masters 0 to
// 3), while a round every master grants locks.
func TestStaleMasterCountsOnlyInAllGrantRounds(t *testing.T) {
	ctx := context.Background()
	r := &rig{Cluster: clustertest.Start(t, 5, clustertest.AOFAlways)}
	t.Cleanup(r.ResumeAll)
	r.clients = r.Clients(t, patientClients)
	gates := make([]*pipelineGate, len(r.clients))
	for i, rc := range r.clients {
		gates[i] = newPipelineGate("info", false)
		rc.AddHook(gates[i])
	}
	c, clk := staleProbeClient(t, r.clients)
	t.Cleanup(func() { // before Close, which waits for the held probes
		for _, g := range gates {
			g.open()
		}
	})
	t0 := clk.Now()
	for _, i := range []int{2, 3, 4} {
		gates[i].shut()
	}
	clk.Advance(probeInterval / 2)
	c.startProbes() // what every operation starts with: all five are due
	eventually(t, 10*time.Second, "masters 0 and 1 answer their probes", func() bool {
		in0, _, err0 := probeInFlight(c, 0)
		in1, _, err1 := probeInFlight(c, 1)
		return !in0 && !in1 && err0 == nil && err1 == nil
	})
	// t0+1.6s: every answered probe, and every probe in flight, was sent
	// over a second ago.
	clk.Advance(probeInterval + 100*time.Millisecond)

	if err := r.clients[4].Set(ctx, "k", "another owner", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	_, err := c.TryLock(ctx, "k", time.Minute)
	var e *Error
	if !errors.As(err, &e) || e.Kind != ErrNotAcquired || e.MayVote != 2 || !errors.Is(err, ErrStaleProbe) ||
		!errors.Is(err, ErrHeldByOther) {
		t.Fatalf("TryLock granted by 0-3 and refused by 4, with 2, 3 and 4 stale: %v; want ErrNotAcquired, 2 may vote, ErrStaleProbe", err)
	}
	for _, i := range []int{2, 3, 4} {
		if inFlight, sentAt, err := probeInFlight(c, i); !inFlight || !sentAt.Equal(t0.Add(probeInterval/2)) || err != nil {
			t.Fatalf("master %d: probe in flight %v, sent at t0+%v, error %v; want its held probe still pending", i, inFlight, sentAt.Sub(t0), err)
		}
	}
	for i, h := range c.Health() {
		if stale := i >= 2; h.Quarantined != stale || stale != errors.Is(h.Err, ErrStaleProbe) {
			t.Fatalf("master %d: %+v; want stale: %v", i, h, stale)
		}
	}

	// Control: plain Redlock counts the same four grants as a quorum.
	gone(t, r.clients[:4], "k") // the failed attempt cleans up after itself
	plain, err := New(r.clients, WithoutQuarantine(), WithMasterTimeout(20*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	pl, err := plain.TryLock(ctx, "k", time.Minute)
	if err != nil {
		t.Fatalf("control: plain Redlock should take k on masters 0 to 3: %v", err)
	}
	if err := pl.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Every master grants: the stale masters count in that round.
	l, err := c.TryLock(ctx, "k2", time.Minute)
	if err != nil {
		t.Fatalf("TryLock that every master grants, 2 counting by themselves: %v", err)
	}
	if l.Token() == 0 {
		t.Fatal("no fencing token")
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{2, 3, 4} {
		if inFlight, _, _ := probeInFlight(c, i); !inFlight {
			t.Fatalf("master %d's held probe answered", i)
		}
	}
}
