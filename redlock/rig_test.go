package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// rig is n masters and a go-redis client for each: real redis-server
// processes (clustertest) unless onMiniredis asks for in-process miniredis
// masters, for fast unit tests. newRig is the only way tests build one; its
// options say what is special about the masters.
type rig struct {
	*clustertest.Cluster                        // nil on miniredis
	mini                 []*miniredis.Miniredis // nil on real servers
	clients              []redis.UniversalClient

	// watcher is the Client that certified the masters (certified): it
	// watched them all along. nil otherwise.
	watcher *Client
	// replica and replicaClient are master 0's lagging replica
	// (withLaggingReplica). nil otherwise.
	replica       *clustertest.Server
	replicaClient *redis.Client
}

// rigConfig is what the rigOptions ask for.
type rigConfig struct {
	args        []string
	redisOpts   []func(*redis.Options)
	mini        bool
	certify     bool
	certifyOpts []Option
	replica     *clustertest.Persistence
}

// rigOption changes how newRig builds a rig.
type rigOption func(*rigConfig)

// withServerArgs passes extra arguments to every redis-server.
func withServerArgs(args ...string) rigOption {
	return func(rc *rigConfig) { rc.args = append(rc.args, args...) }
}

// withRedisOptions changes the rig's go-redis clients (by default
// clustertest's fail-fast ones: context deadlines honoured, 1 s dial, read
// and write timeouts).
func withRedisOptions(opts ...func(*redis.Options)) rigOption {
	return func(rc *rigConfig) { rc.redisOpts = append(rc.redisOpts, opts...) }
}

// onMiniredis runs the masters in process on miniredis: no pause, kill or
// persistence, for fast unit tests. The behaviour under faults is proven
// against real redis-server processes.
func onMiniredis() rigOption { return func(rc *rigConfig) { rc.mini = true } }

// certified has a first Client, built with opts (quarantine on unless opts
// turn it off), certify the masters with a first lock (a fresh cluster is
// certified at once, rule S) and wait until it sees every master counting;
// that Client is the rig's watcher.
func certified(opts ...Option) rigOption {
	return func(rc *rigConfig) { rc.certify, rc.certifyOpts = true, opts }
}

// withLaggingReplica gives master 0 a replica with persistence p that copies
// it, its certificate included when the rig is certified, and then stops
// following it (REPLICAOF NO ONE: a replica whose master is gone cannot
// serve a resync): from then on it lags. The replica attaches before the
// masters are certified: a master's first replica gives it a new
// replication id (Redis starts its backlog with one), which would uncertify
// it.
func withLaggingReplica(p clustertest.Persistence) rigOption {
	return func(rc *rigConfig) { rc.replica = &p }
}

// newRig starts n masters without persistence, as opts say, and resumes
// every paused one when the test ends (a restart test restarts a master
// with the persistence it needs).
func newRig(t testing.TB, n int, opts ...rigOption) *rig {
	t.Helper()
	var rc rigConfig
	for _, o := range opts {
		o(&rc)
	}
	if rc.mini {
		return miniRig(t, n)
	}
	c := clustertest.StartWith(t, n, clustertest.NoPersistence, clustertest.WithArgs(rc.args...))
	t.Cleanup(c.ResumeAll)
	r := &rig{Cluster: c, clients: c.Clients(t, rc.redisOpts...)}
	if rc.replica != nil {
		r.attachReplica(t, *rc.replica)
	}
	if rc.certify {
		r.watcher = certify(t, r, rc.certifyOpts...)
	}
	if rc.replica != nil {
		r.detachReplica(t)
	}
	return r
}

// miniRig is newRig on miniredis.
func miniRig(t testing.TB, n int) *rig {
	t.Helper()
	r := &rig{}
	for range n {
		m := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
		t.Cleanup(func() { _ = c.Close() })
		r.mini, r.clients = append(r.mini, m), append(r.clients, c)
	}
	return r
}

// certify certifies r's masters with a first lock and waits until its
// client sees every master counting; that client is returned.
func certify(t testing.TB, r *rig, opts ...Option) *Client {
	t.Helper()
	w, err := New(r.clients, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = w.Close() })
	warmUp(t, w)
	eventually(t, 10*time.Second, "every master certified", func() bool {
		for _, h := range w.Health() {
			if h.Quarantined {
				return false
			}
		}
		return true
	})
	return w
}

// warmUp takes and releases one lock with every master up.
func warmUp(t testing.TB, c *Client) {
	t.Helper()
	lockAndRelease(t, c, "warmup", time.Second)
}

// lockAndRelease takes key with TryLock and releases it at once, failing
// the test on any error.
func lockAndRelease(t testing.TB, c *Client, key string, ttl time.Duration) {
	t.Helper()
	ctx := context.Background()
	l, err := c.TryLock(ctx, key, ttl)
	if err != nil {
		t.Fatalf("lock %s: %v", key, err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatalf("release %s: %v", key, err)
	}
}

// attachReplica starts the rig's replica of master 0, with persistence p,
// and waits until it is in sync.
func (r *rig) attachReplica(t testing.TB, p clustertest.Persistence) {
	t.Helper()
	ctx := context.Background()
	r.replica = clustertest.StartServer(t, p)
	r.replicaClient = r.replica.Client(t)
	host, port, _ := strings.Cut(r.Servers[0].Addr, ":")
	if err := r.replicaClient.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "the replica in sync", func() bool {
		info, _ := r.replicaClient.Info(ctx, "replication").Result()
		return strings.Contains(info, "master_link_status:up")
	})
}

// detachReplica waits until the replica has master 0's certificate, when
// the rig is certified, and stops it following master 0: it keeps its data,
// and lags from now on.
func (r *rig) detachReplica(t testing.TB) {
	t.Helper()
	ctx := context.Background()
	if r.watcher != nil {
		eventually(t, 10*time.Second, "the replica has master 0's certificate", func() bool {
			v, _ := r.replicaClient.Get(ctx, keys.Cert).Result()
			return v != ""
		})
	}
	if err := r.replicaClient.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
}

// client builds a Client over the rig. Fresh test masters are younger than
// any TTL, so quarantine would (rightly) keep them from voting; tests that
// are not about restarts turn it off.
func (r *rig) client(t testing.TB, opts ...Option) *Client {
	t.Helper()
	c, err := New(r.clients, append([]Option{WithoutQuarantine()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// values reports, per master, the value stored at key ("" when absent).
// Paused masters must be resumed first.
func (r *rig) values(t *testing.T, key string) []string {
	t.Helper()
	out := make([]string, len(r.clients))
	for i, c := range r.clients {
		ctx, cancel := context.WithTimeout(context.Background(), 2*time.Second)
		v, err := c.Get(ctx, key).Result()
		cancel()
		if err != nil && !errors.Is(err, redis.Nil) {
			t.Fatalf("GET %s on master %d: %v", key, i, err)
		}
		out[i] = v
	}
	return out
}

// eventually polls cond every 20 ms until it holds or the deadline passes.
func eventually(t testing.TB, within time.Duration, what string, cond func() bool) {
	t.Helper()
	deadline := time.Now().Add(within)
	for !cond() {
		if time.Now().After(deadline) {
			t.Fatalf("not within %v: %s", within, what)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func countNonEmpty(vals []string) int {
	n := 0
	for _, v := range vals {
		if v != "" {
			n++
		}
	}
	return n
}

func pause(t *testing.T, r *rig, idx ...int) {
	t.Helper()
	for _, i := range idx {
		if err := r.Servers[i].Pause(); err != nil {
			t.Fatal(err)
		}
	}
}

func resume(t *testing.T, r *rig, idx ...int) {
	t.Helper()
	for _, i := range idx {
		if err := r.Servers[i].Resume(); err != nil {
			t.Fatal(err)
		}
	}
}

// patientClients lets only the per-master timeout end a command: the
// go-redis read and write timeouts of the test clients (1 s) would end a
// stalled master's command long before it.
func patientClients(o *redis.Options) { o.ReadTimeout, o.WriteTimeout = time.Minute, time.Minute }

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
