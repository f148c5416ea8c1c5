package redlock

import (
	"context"
	"errors"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

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

// Five masters started a second ago, all up: the first TryLock succeeds,
// because every master granted. A round with one master silent keeps the
// strict rule: young masters do not count, and the error says so honestly.
func TestFreshMastersLockAtOnce(t *testing.T) {
	r := newRig(t, 5)
	c, err := New(r.clients, WithQuarantine(time.Hour))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("first TryLock on five fresh masters: %v", err)
	}
	if lease.Token() == 0 {
		t.Fatal("no fencing token")
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, h := range c.Health() {
		if !h.Quarantined || !errors.Is(h.Err, ErrYoung) || !strings.Contains(h.Reason, "started") || h.Until.IsZero() {
			t.Fatalf("master %d: %+v; want young, with when it votes", h.Master, h)
		}
	}
	pause(t, r, 4)
	defer resume(t, r, 4)
	_, err = c.TryLock(ctx, "k2", time.Second)
	var e *Error
	if !errors.As(err, &e) || !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrYoung) || e.MayVote != 0 ||
		!strings.Contains(err.Error(), "0 may vote yet") {
		t.Fatalf("TryLock on young masters with one paused: %v; want ErrNoQuorum, ErrYoung, \"0 may vote yet\"", err)
	}
	for i, rc := range r.clients[:4] {
		if n, err := rc.Exists(ctx, "k2").Result(); err != nil || n != 0 {
			t.Fatalf("master %d: key left by an attempt bound to fail (%d, %v)", i, n, err)
		}
	}
}

// A fresh cluster with one master down cannot be bootstrapped: the down
// master might carry a marker, and then the others lost their data. The
// others are quarantined as masters that lost their data; once every master
// answers, a round they all grant still locks at once.
func TestFreshClusterWithAMasterDownIsNotBootstrapped(t *testing.T) {
	r := newRig(t, 5)
	c, err := New(r.clients, WithQuarantine(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	pause(t, r, 4)
	_, err = c.TryLock(ctx, "k", time.Second)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrDataLost) {
		t.Fatalf("TryLock on a fresh cluster with a master down: %v; want ErrNoQuorum with ErrDataLost", err)
	}
	if n, _ := r.clients[0].Exists(ctx, EpochKey).Result(); n != 0 {
		t.Fatal("a marker was set although one master did not answer")
	}
	resume(t, r, 4)
	time.Sleep(probeInterval) // the paused master is probed again at the next operation
	eventually(t, 10*time.Second, "every master answers and grants", func() bool {
		l, err := c.TryLock(ctx, "k", time.Second)
		if err != nil {
			return false
		}
		_ = l.Release(ctx)
		return true
	})
}

// The call that first uses a longer TTL is judged by it: masters older than
// the short TTL but younger than the new one stop counting by themselves.
func TestLongerTTLAppliesFromTheCallThatUsesIt(t *testing.T) {
	r := newRig(t, 5)
	time.Sleep(2100 * time.Millisecond) // every master is now older than 1 s
	c, err := New(r.clients)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	warmUp(t, c)
	pause(t, r, 4) // no all-grant round: the strict rule decides
	defer resume(t, r, 4)
	lease, err := c.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("TryLock with a TTL shorter than the masters' uptime: %v", err)
	}
	_ = lease.Release(ctx)
	_, err = c.TryLock(ctx, "k", time.Hour)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrYoung) {
		t.Fatalf("first TryLock with a 1h TTL on masters up for seconds: %v; want ErrNoQuorum with ErrYoung", err)
	}
}

// Defect 1 of issue 7: client A, cut off from masters 3 and 4, holds k on
// {0,1,2}. Master 0 then loses its data (FLUSHALL, or it is replaced by an
// empty node configured appendfsync always). A new client B, meeting the
// masters for the first time, must not count master 0: it would win k on
// {0,3,4} while A's lease is valid. Plain Redlock (WithoutQuarantine) does,
// which shows the test can fail.
func TestFirstContactClientRefusesMasterThatLostItsData(t *testing.T) {
	for _, loss := range []string{"flushall", "empty durable replacement", "two masters flushed"} {
		t.Run(loss, func(t *testing.T) {
			ctx := context.Background()
			r := &rig{Cluster: clustertest.Start(t, 5, clustertest.AOFAlways)}
			t.Cleanup(r.ResumeAll)
			r.clients = r.Clients(t)
			warm, err := New(r.clients)
			if err != nil {
				t.Fatal(err)
			}
			defer warm.Close()
			warmUp(t, warm) // marks the fresh cluster
			a := partitionedClient(t, r, 3, 4)
			lease, err := a.TryLock(ctx, "k", 30*time.Second)
			if err != nil {
				t.Fatalf("A's lock on {0,1,2}: %v", err)
			}
			defer lease.Release(ctx)
			switch loss {
			case "flushall":
				if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
					t.Fatal(err)
				}
			case "two masters flushed": // q − 1 losses: master 2 still has A's key
				for _, i := range []int{0, 1} {
					if err := r.clients[i].FlushAll(ctx).Err(); err != nil {
						t.Fatal(err)
					}
				}
			default:
				s := r.Servers[0]
				if err := s.Kill(); err != nil {
					t.Fatal(err)
				}
				if err := os.RemoveAll(s.Dir + "/appendonlydir"); err != nil {
					t.Fatal(err)
				}
				if err := s.Restart(clustertest.AOFAlways); err != nil {
					t.Fatal(err)
				}
			}

			secondHolderOnlyWithoutQuarantine(t, r.clients, ErrDataLost)
			if lease.Err() != nil {
				t.Fatalf("A's lease: %v", lease.Err())
			}
		})
	}
}

// Defect 2 of issue 7: master 0 fails over to a replica that lagged behind
// and missed A's key. The replica is durable and its process old: only its
// promotion tells. A client meeting it must quarantine it for the longest
// TTL, and have its counters raised before it votes.
func TestFailoverToLaggingReplicaIsQuarantined(t *testing.T) {
	ctx := context.Background()
	r := &rig{Cluster: clustertest.Start(t, 5, clustertest.AOFAlways)}
	t.Cleanup(r.ResumeAll)
	r.clients = r.Clients(t)
	replica := clustertest.StartServer(t, clustertest.AOFAlways)
	rc := replica.Client(t)
	host, port, _ := strings.Cut(r.Servers[0].Addr, ":")
	if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	// The first acquisition marks the cluster; let the replica copy that.
	warm, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer warm.Close()
	warmUp(t, warm)
	eventually(t, 10*time.Second, "replica in sync", func() bool {
		v, _ := rc.Get(ctx, EpochKey).Result()
		return v != ""
	})
	// The replica stops following master 0 (it lags from now on); it is
	// promoted, and clients switch to it, only after A locked.
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	a := partitionedClient(t, r, 3, 4)
	lease, err := a.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {0,1,2}: %v", err)
	}
	defer lease.Release(ctx)
	if err := r.Servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if v, _ := rc.Get(ctx, "k").Result(); v != "" {
		t.Fatal("the replica did not lag: it has A's key")
	}

	failedOver := append([]redis.UniversalClient{rc}, r.clients[1:]...)
	secondHolderOnlyWithoutQuarantine(t, failedOver, ErrPromoted)
}

// secondHolderOnlyWithoutQuarantine is the check of the two tests above,
// while A holds k on masters 0, 1 and 2 and master 0 lost A's key: a new
// client B with quarantine is refused, master 0 being quarantined for the
// longest TTL for reason; plain Redlock (WithoutQuarantine) grants k a
// second time, on masters 0, 3 and 4, which shows the test can fail.
func secondHolderOnlyWithoutQuarantine(t *testing.T, masters []redis.UniversalClient, reason error) {
	t.Helper()
	ctx := context.Background()
	b, err := New(masters, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	_, err = b.TryLock(ctx, "k", 30*time.Second)
	if !errors.Is(err, ErrNotAcquired) || !errors.Is(err, reason) {
		t.Fatalf("B's TryLock while A holds k: %v; want ErrNotAcquired with %v", err, reason)
	}
	if h := b.Health()[0]; !errors.Is(h.Err, reason) || time.Until(h.Until) < 25*time.Second {
		t.Fatalf("master 0 seen by B: %+v; want %v, quarantined for the longest TTL from now", h, reason)
	}
	gone(t, []redis.UniversalClient{masters[0], masters[3], masters[4]}, "k") // B's failed attempt cleans up after itself
	plain, err := New(masters, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	second, err := plain.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("control: plain Redlock should win k on {0,3,4} (two holders): %v", err)
	}
	_ = second.Release(ctx)
}

// gone waits until key is on none of masters.
func gone(t *testing.T, masters []redis.UniversalClient, key string) {
	t.Helper()
	eventually(t, 5*time.Second, key+" cleaned up", func() bool {
		for _, m := range masters {
			if n, err := m.Exists(context.Background(), key).Result(); err != nil || n != 0 {
				return false
			}
		}
		return true
	})
}

// warmUp takes and releases one lock with every master up: the first use of
// a fresh cluster marks every master.
func warmUp(t *testing.T, c *Client) {
	t.Helper()
	ctx := context.Background()
	l, err := c.TryLock(ctx, "warmup", time.Second)
	if err != nil {
		t.Fatalf("warm-up lock on a fresh cluster: %v", err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// partitionedClient is a Client whose masters in cut are a dead address: a
// client partitioned from them.
func partitionedClient(t *testing.T, r *rig, cut ...int) *Client {
	t.Helper()
	cs := append([]redis.UniversalClient(nil), r.clients...)
	for _, i := range cut {
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
		t.Cleanup(func() { _ = dead.Close() })
		cs[i] = dead
	}
	c, err := New(cs, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
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
		c.electorate(ctx) // what every attempt does: re-probe, and sync once the quarantine is over
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
	c.electorate(ctx) // triggers a re-probe, which sees the new run_id
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
	// Restarted while its process is younger than the TTL, then raising its
	// counters (uptime is whole seconds: under load the first may be over).
	if h := c.Health()[0]; !errors.Is(h.Err, ErrRestarted) && !errors.Is(h.Err, ErrRaisingCounters) {
		t.Fatalf("Health of the restarted master: %+v; want quarantined for its restart", h)
	}
	// A client meeting the masters only now sees the same: the master's
	// synced run_id is its previous process's.
	fresh, err := New(r.clients, WithQuarantine(ttl))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	if _, err := fresh.TryLock(ctx, "res", ttl); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("first-contact TryLock needing the restarted master: %v; want ErrNoQuorum", err)
	}
	if h := fresh.Health()[0]; !errors.Is(h.Err, ErrRestarted) && !errors.Is(h.Err, ErrRaisingCounters) {
		t.Fatalf("first-contact Health of the restarted master: %+v; want quarantined for its restart", h)
	}
}
