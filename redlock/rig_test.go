package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// rig is five real redis-server masters and a Client over them.
type rig struct {
	*clustertest.Cluster
	clients []redis.UniversalClient
}

func newRig(t *testing.T, n int) *rig {
	t.Helper()
	c := clustertest.Start(t, n)
	t.Cleanup(c.ResumeAll)
	return &rig{Cluster: c, clients: c.Clients(t)}
}

// client builds a Client over the rig. Fresh test masters are younger than
// any TTL, so quarantine would (rightly) keep them from voting; tests that
// are not about restarts turn it off.
func (r *rig) client(t *testing.T, opts ...Option) *Client {
	t.Helper()
	c, err := New(r.clients, append([]Option{WithoutQuarantine()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// holders reports, per master, the value stored at key ("" when absent).
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
func eventually(t *testing.T, within time.Duration, what string, cond func() bool) {
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
