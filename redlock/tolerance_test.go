package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// The data-loss kinds a tolerant quorum survives without detecting them,
// each done to master 0 of a rig after A locked.
var dataLosses = []string{"flushall", "restart empty", "restart from an older snapshot", "failover to a lagging replica"}

// loseData makes master 0 of r lose A's key the way loss says, and returns
// the masters a client meets afterwards (the promoted replica in place of
// master 0 for a failover). snapshot must have been called before A locked.
func loseData(t *testing.T, r *rig, loss string, replica *redis.Client) []redis.UniversalClient {
	t.Helper()
	ctx := context.Background()
	masters := r.clients
	switch loss {
	case "flushall":
		if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	case "restart empty":
		if err := r.Servers[0].Restart(clustertest.NoPersistence); err != nil {
			t.Fatal(err)
		}
	case "restart from an older snapshot": // dump.rdb was saved before A locked
		if err := r.Servers[0].Restart(clustertest.NoPersistence); err != nil {
			t.Fatal(err)
		}
	case "failover to a lagging replica":
		if err := replica.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
			t.Fatal(err)
		}
		if err := r.Servers[0].Kill(); err != nil {
			t.Fatal(err)
		}
		masters = append([]redis.UniversalClient{replica}, r.clients[1:]...)
	}
	if v, _ := masters[0].Get(ctx, "k").Result(); v != "" {
		t.Fatalf("%s: master 0 still has A's key", loss)
	}
	return masters
}

// prepareLoss readies master 0 for loss before A locks: a snapshot to roll
// back to, or a replica that stops following (and so lags) from now on.
func prepareLoss(t *testing.T, r *rig, loss string) *redis.Client {
	t.Helper()
	ctx := context.Background()
	switch loss {
	case "restart from an older snapshot":
		if err := r.clients[0].Set(ctx, "before-the-snapshot", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := r.clients[0].Save(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	case "failover to a lagging replica":
		replica := clustertest.StartServer(t, clustertest.NoPersistence)
		rc := replica.Client(t)
		host, port, _ := strings.Cut(r.Servers[0].Addr, ":")
		if err := rc.Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
			t.Fatal(err)
		}
		if err := r.clients[0].Set(ctx, "before-the-split", "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		eventually(t, 10*time.Second, "replica in sync", func() bool {
			v, _ := rc.Get(ctx, "before-the-split").Result()
			return v == "1"
		})
		// It stops following master 0 now (an operator or a network split),
		// and keeps answering as a replica until it is promoted.
		if err := rc.Do(ctx, "CONFIG", "SET", "replica-read-only", "yes").Err(); err != nil {
			t.Fatal(err)
		}
		if err := rc.Do(ctx, "REPLICAOF", "127.0.0.1", "1").Err(); err != nil {
			t.Fatal(err)
		}
		return rc
	}
	return nil
}

// cutClient is a Client with opts whose masters in cut are a dead address.
func cutClient(t *testing.T, masters []redis.UniversalClient, cut []int, opts ...Option) *Client {
	t.Helper()
	cs := append([]redis.UniversalClient(nil), masters...)
	for _, i := range cut {
		dead := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1", MaxRetries: -1, DialTimeout: 100 * time.Millisecond})
		t.Cleanup(func() { _ = dead.Close() })
		cs[i] = dead
	}
	c, err := New(cs, opts...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// With WithDataLossTolerance(1) on five masters (quorum 4) and nothing that
// detects restarts, one master losing data while A holds k never gives a
// second holder, whatever the loss, and the next holder's token is larger
// than A's. Plain Redlock (quorum 3, no quarantine) gives k to a second
// holder after the same loss, which shows the test can fail.
func TestDataLossTolerantQuorumNeedsNoDetection(t *testing.T) {
	for _, loss := range dataLosses {
		t.Run(loss, func(t *testing.T) {
			for _, tolerant := range []bool{true, false} {
				ctx := context.Background()
				r := newRig(t, 5)
				opts, cut := []Option{WithDataLossTolerance(1)}, []int{4} // A holds k on {0,1,2,3}
				if !tolerant {
					opts, cut = []Option{WithoutQuarantine()}, []int{3, 4} // A holds k on {0,1,2}
				}
				replica := prepareLoss(t, r, loss)
				a := cutClient(t, r.clients, cut, opts...)
				lease, err := a.TryLock(ctx, "k", 30*time.Second)
				if err != nil {
					t.Fatalf("A's lock: %v", err)
				}
				masters := loseData(t, r, loss, replica)

				b, err := New(masters, opts...)
				if err != nil {
					t.Fatal(err)
				}
				second, err := b.TryLock(ctx, "k", 30*time.Second)
				if !tolerant {
					if err != nil {
						t.Fatalf("control: plain Redlock should give k a second holder after %s: %v", loss, err)
					}
					_ = second.Release(ctx)
					_ = b.Close()
					continue
				}
				if !errors.Is(err, ErrNotAcquired) || b.Quorum() != 4 {
					t.Fatalf("B's TryLock while A holds k, quorum %d: %v; want ErrNotAcquired with quorum 4", b.Quorum(), err)
				}
				_ = lease.Release(ctx) // its key is on three masters now, and master 4 is cut off
				// Lock, not TryLock: Release returns once a quorum decided, and the
				// owner-checked deletes of A's release and of B's failed attempt
				// may still be on their way to the other masters.
				wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
				next, err := b.Lock(wctx, "k", 30*time.Second)
				cancel()
				if err != nil {
					t.Fatalf("B's Lock after A released: %v", err)
				}
				if next.Token() <= lease.Token() {
					t.Fatalf("token %d after %s is not above A's %d", next.Token(), loss, lease.Token())
				}
				_ = next.Release(ctx)
				_ = b.Close()
			}
		})
	}
}

// New refuses a tolerance the masters cannot give, and one beside an explicit
// quarantine setting; Quorum reports the tolerant quorum.
func TestDataLossToleranceOptions(t *testing.T) {
	r := newRig(t, 3)
	for _, tc := range []struct {
		opts []Option
		want string
	}{
		{[]Option{WithDataLossTolerance(-1)}, "negative"},
		{[]Option{WithDataLossTolerance(3)}, "quorum of 4, more than the 3 masters"},
		{[]Option{WithDataLossTolerance(1), WithQuarantine(time.Minute)}, "replaces the restart quarantine"},
		{[]Option{WithoutQuarantine(), WithDataLossTolerance(1)}, "replaces the restart quarantine"},
	} {
		_, err := New(r.clients, tc.opts...)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("New(%d options): %v; want ErrInvalidArgument saying %q", len(tc.opts), err, tc.want)
		}
	}
	for f, q := range []int{2, 3, 3} {
		c, err := New(r.clients, WithDataLossTolerance(f))
		if err != nil {
			t.Fatal(err)
		}
		if c.Quorum() != q {
			t.Errorf("3 masters, tolerance %d: quorum %d, want %d", f, c.Quorum(), q)
		}
		_ = c.Close()
	}
}
