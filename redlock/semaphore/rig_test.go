package semaphore

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// realMasters starts n real redis-server masters and returns one client per
// master; they are resumed (if paused) and stopped when the test ends.
func realMasters(t testing.TB, n int) (*clustertest.Cluster, []redis.UniversalClient) {
	t.Helper()
	c := clustertest.Start(t, n)
	t.Cleanup(c.ResumeAll)
	return c, c.Clients(t)
}

// miniMaster is one in-process master for fast unit tests.
func miniMaster(t testing.TB) (*miniredis.Miniredis, []redis.UniversalClient) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	t.Cleanup(func() { _ = c.Close() })
	return m, []redis.UniversalClient{c}
}

// newSem builds a semaphore closed when the test ends. Test masters are
// fresh, so the redlock clients of Guarded and of several masters run
// without restart quarantine (these tests are not about restarts).
func newSem(t testing.TB, masters []redis.UniversalClient, name string, limit int, opts ...Option) *Semaphore {
	t.Helper()
	s, err := New(masters, name, limit, append([]Option{WithLockOptions(redlock.WithoutQuarantine())}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = s.Close() })
	return s
}

func ctxFor(t testing.TB, d time.Duration) context.Context {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), d)
	t.Cleanup(cancel)
	return ctx
}

// mustAcquire takes n permits with TryAcquire.
func mustAcquire(t testing.TB, s *Semaphore, n int) []*Permit {
	t.Helper()
	var out []*Permit
	for i := range n {
		p, err := s.TryAcquire(ctxFor(t, 5*time.Second))
		if err != nil {
			t.Fatalf("TryAcquire %d of %d: %v", i+1, n, err)
		}
		out = append(out, p)
	}
	return out
}

func releaseAll(t testing.TB, ps []*Permit) {
	t.Helper()
	for _, p := range ps {
		_ = p.Release(context.Background())
	}
}

// held counts the permits whose holders believe they hold: not ended
// locally, and confirmed by a Refresh.
func believed(t testing.TB, ps []*Permit) int {
	t.Helper()
	n := 0
	for _, p := range ps {
		if p.Refresh(ctxFor(t, 5*time.Second)) == nil {
			n++
		}
	}
	return n
}

// maxTracker is the independent counter of holders inside a critical
// section.
type maxTracker struct {
	inside, max atomic.Int64
}

func (m *maxTracker) enter() int64 {
	n := m.inside.Add(1)
	for {
		cur := m.max.Load()
		if n <= cur || m.max.CompareAndSwap(cur, n) {
			return n
		}
	}
}

func (m *maxTracker) leave() { m.inside.Add(-1) }

var variants = []Variant{Atomic, Basic, Fair, Guarded}
