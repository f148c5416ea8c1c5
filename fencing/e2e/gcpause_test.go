package e2e_test

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/pgstore"
	"github.com/quorumlock/quorumlock/fencing/redisstore"
	"github.com/quorumlock/quorumlock/internal/pgtest"
	"github.com/quorumlock/quorumlock/redlock"
)

// The GC-pause scenario of Kleppmann's critique, end to end: holder A is
// paused past its validity, B acquires and writes, A resumes and writes. The
// store must reject A.
func TestGCPausedHolderIsFencedOff(t *testing.T) {
	stores := map[string]func(t *testing.T) fencing.Store{
		"redis": func(t *testing.T) fencing.Store {
			return redisstore.New(clustertest.StartServer(t, clustertest.NoPersistence).Client(t))
		},
		"postgres": func(t *testing.T) fencing.Store {
			s, err := pgstore.New(context.Background(), pgtest.Pool(t))
			if err != nil {
				t.Fatal(err)
			}
			return s
		},
	}
	for name, newStore := range stores {
		t.Run(name, func(t *testing.T) {
			masters := clustertest.Start(t, 5)
			store := newStore(t)
			a := newLocker(t, masters)
			b := newLocker(t, masters)
			ctx := context.Background()

			leaseA, err := a.TryLock(ctx, "invoice:7", 300*time.Millisecond)
			if err != nil {
				t.Fatal(err)
			}
			if err := store.Write(ctx, "invoice:7", leaseA.Token(), "A", []byte("draft by A")); err != nil {
				t.Fatalf("A's write while holding: %v", err)
			}

			// A stops here: a stop-the-world pause. Its lease runs out, its keys expire.
			<-leaseA.Done()
			waitCtx, cancel := context.WithTimeout(ctx, 10*time.Second)
			defer cancel()
			leaseB, err := b.Lock(waitCtx, "invoice:7", 10*time.Second)
			if err != nil {
				t.Fatal(err)
			}
			if leaseB.Token() <= leaseA.Token() {
				t.Fatalf("B's token %d is not above A's %d", leaseB.Token(), leaseA.Token())
			}
			if err := store.Write(ctx, "invoice:7", leaseB.Token(), "B", []byte("final by B")); err != nil {
				t.Fatalf("B's write: %v", err)
			}

			// A wakes up, still believing it holds the lock, and writes.
			err = store.Write(ctx, "invoice:7", leaseA.Token(), "A", []byte("late write by A"))
			if !errors.Is(err, fencing.ErrStaleToken) {
				t.Fatalf("A's late write: %v, want ErrStaleToken", err)
			}
			if _, err := store.Read(ctx, "invoice:7", leaseA.Token(), "A"); !errors.Is(err, fencing.ErrStaleToken) {
				t.Fatalf("A's late read: %v, want ErrStaleToken", err)
			}
			got, err := store.Read(ctx, "invoice:7", leaseB.Token(), "B")
			if err != nil || string(got) != "final by B" {
				t.Fatalf("value %q, %v; want B's", got, err)
			}
			if err := leaseB.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// newLocker is a Client over the masters. Fresh test masters are younger than
// any TTL, which quarantine rightly refuses; these tests are about tokens,
// and the restart tests below keep quarantine on.
func newLocker(t *testing.T, masters *clustertest.Cluster, opts ...redlock.Option) *redlock.Client {
	t.Helper()
	c, err := redlock.New(masters.Clients(t), append([]redlock.Option{redlock.WithoutQuarantine()}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}
