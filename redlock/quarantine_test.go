package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
)

// quarantineRig starts five masters with persistence p and a Client with
// quarantine on (the default), and waits until a first lock succeeds: fresh
// masters are younger than the TTL and rightly do not vote at first.
func quarantineRig(t *testing.T, p clustertest.Persistence, ttl time.Duration) (*rig, *Client) {
	t.Helper()
	c := clustertest.Start(t, 5, p)
	t.Cleanup(c.ResumeAll)
	r := &rig{Cluster: c, clients: c.Clients(t)}
	cl, err := New(r.clients)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = cl.Close() })
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	lease, err := cl.Lock(ctx, "warmup", ttl)
	if err != nil {
		t.Fatalf("first lock on fresh masters: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	return r, cl
}

func TestFreshMastersAreQuarantinedUntilOlderThanTheTTL(t *testing.T) {
	r := newRig(t, 3)
	c, err := New(r.clients, WithQuarantine(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	_, err = c.TryLock(context.Background(), "k", time.Second)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrQuarantined) {
		t.Fatalf("TryLock on masters up for seconds with a 1h quarantine: %v; want ErrNoQuorum with ErrQuarantined", err)
	}
	for _, h := range c.Health() {
		if !h.Quarantined || !strings.Contains(h.Reason, "less than the longest TTL") {
			t.Fatalf("master %d: %+v; want quarantined for its uptime", h.Master, h)
		}
	}
}

func TestRestartWithoutPersistenceIsQuarantined(t *testing.T) {
	const ttl = time.Second
	r, c := quarantineRig(t, clustertest.NoPersistence, ttl)
	ctx := context.Background()
	first, err := c.TryLock(ctx, "res", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if err := first.Release(ctx); err != nil {
		t.Fatal(err)
	}

	if err := r.Servers[0].Restart(clustertest.NoPersistence); err != nil {
		t.Fatal(err)
	}
	pause(t, r, 1, 2) // only 0, 3 and 4 answer: master 0 must not be counted
	_, err = c.TryLock(ctx, "res", ttl)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrQuarantined) {
		t.Fatalf("TryLock counting a master restarted empty: %v; want ErrNoQuorum with ErrQuarantined", err)
	}
	h := c.Health()[0]
	if !h.Quarantined || h.Reason == "" {
		t.Fatalf("Health of the restarted master: %+v; want quarantined with a reason", h)
	}
	resume(t, r, 1, 2)

	// After the longest TTL it rejoins, its counter raised from the others.
	wait, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	var lease *Lease
	eventually(t, 30*time.Second, "restarted master votes again", func() bool {
		c.voters(ctx) // what every attempt does: re-probe, and sync once the quarantine is over
		return !c.Health()[0].Quarantined
	})
	lease, err = c.Lock(wait, "res", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if lease.Token() <= first.Token() {
		t.Fatalf("token %d after restart is not above %d", lease.Token(), first.Token())
	}
	got, err := r.clients[0].Get(ctx, FencePrefix+"res").Result()
	if err != nil {
		t.Fatalf("counter on the rejoined master: %v", err)
	}
	if tok, _ := fencing.ParseToken(got); tok < first.Token() {
		t.Fatalf("rejoined master's counter %s is below the earlier token %d", got, first.Token())
	}
	_ = lease.Release(ctx)
}

func TestRestartWithAOFAlwaysVotesAtOnce(t *testing.T) {
	const ttl = time.Second
	r, c := quarantineRig(t, clustertest.AOFAlways, ttl)
	ctx := context.Background()
	if err := r.Servers[0].Restart(clustertest.AOFAlways); err != nil {
		t.Fatal(err)
	}
	pause(t, r, 1, 2) // the lock needs master 0's vote
	time.Sleep(probeInterval + 100*time.Millisecond)
	c.voters(ctx) // triggers a re-probe, which sees the new run_id
	eventually(t, 10*time.Second, "master 0 probed after its restart", func() bool {
		return c.Health()[0].RunID != "" && !c.Health()[0].Quarantined
	})
	lease, err := c.TryLock(ctx, "res", ttl)
	if err != nil {
		t.Fatalf("TryLock needing a master restarted with appendfsync always: %v", err)
	}
	_ = lease.Release(ctx)
}

// A restart with appendfsync everysec keeps the epoch marker but may lose the
// last second of writes: the master is quarantined for its uptime and its
// counters are raised again before it votes.
func TestRestartWithAOFEverySecIsQuarantined(t *testing.T) {
	const ttl = 2 * time.Second
	r, c := quarantineRig(t, clustertest.AOFEverySec, ttl)
	ctx := context.Background()
	time.Sleep(probeInterval) // the next operation re-probes every master
	if err := r.Servers[0].Restart(clustertest.AOFEverySec); err != nil {
		t.Fatal(err)
	}
	pause(t, r, 1, 2) // the lock would need master 0's vote
	_, err := c.TryLock(ctx, "res", ttl)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrQuarantined) {
		t.Fatalf("TryLock needing a master restarted with appendfsync everysec: %v; want ErrNoQuorum with ErrQuarantined", err)
	}
	if h := c.Health()[0]; !h.Quarantined || !strings.Contains(h.Reason, "run_id changed") {
		t.Fatalf("Health of the restarted master: %+v; want quarantined for its restart", h)
	}
}
