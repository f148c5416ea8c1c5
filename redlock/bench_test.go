package redlock

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// Benchmarks on five real redis-server masters on loopback:
//
//	go test -run '^$' -bench . -benchtime 3s ./redlock/
//
// docs/performance.md records the figures.

// benchClient is a Client with the defaults users get (restart detection
// on: every acquire pipeline carries its INFO) and opts, over masters
// certified by a first lock.
func benchClient(b *testing.B, masters *clustertest.Cluster, opts ...Option) *Client {
	b.Helper()
	c, err := New(masters.Clients(b), opts...)
	if err != nil {
		b.Fatal(err)
	}
	b.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	l, err := c.Lock(ctx, "bench:warmup", 10*time.Second) // certifies a fresh cluster
	if err != nil {
		b.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		b.Fatal(err)
	}
	return c
}

// BenchmarkLock is Lock + Release, the calls users make, on one goroutine:
// a key never locked before (free), and one key locked again right after
// its release (after-release). Lock of a free key must cost what TryLock
// costs: compare with BenchmarkLockUnlock/fencing=true/goroutines=1.
func BenchmarkLock(b *testing.B) {
	masters := newRig(b, 5).Cluster
	c := benchClient(b, masters)
	ctx := context.Background()
	for _, name := range []string{"free", "after-release"} {
		b.Run(name, func(b *testing.B) {
			b.ReportAllocs()
			for i := 0; b.Loop(); i++ {
				key := "bench:lock:again"
				if name == "free" {
					key = fmt.Sprintf("bench:lock:%d", i)
				}
				lease, err := c.Lock(ctx, key, 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// BenchmarkLockUnlock is TryLock + Release of a key no one else wants, from
// 1, 16 and 64 goroutines, with fencing tokens (two round trips to acquire)
// and without (one).
func BenchmarkLockUnlock(b *testing.B) {
	masters := newRig(b, 5).Cluster
	for _, fencing := range []bool{true, false} {
		c := benchClient(b, masters, WithFencing(fencing))
		for _, g := range []int{1, 16, 64} {
			b.Run(fmt.Sprintf("fencing=%v/goroutines=%d", fencing, g), func(b *testing.B) {
				ctx := context.Background()
				var wg sync.WaitGroup
				per := (b.N + g - 1) / g
				b.ResetTimer()
				for w := range g {
					wg.Go(func() {
						key := fmt.Sprintf("bench:%d", w)
						for range per {
							lease, err := c.TryLock(ctx, key, 10*time.Second)
							if err != nil {
								b.Error(err)
								return
							}
							if err := lease.Release(ctx); err != nil {
								b.Error(err)
								return
							}
						}
					})
				}
				wg.Wait()
				b.StopTimer()
				b.ReportMetric(float64(per*g)/b.Elapsed().Seconds(), "locks/s")
			})
		}
	}
}

// BenchmarkHotKey is 32 contenders (4 clients of 8 goroutines) taking turns
// on one key with Lock: owner changes per second and the wait for the lock.
func BenchmarkHotKey(b *testing.B) {
	masters := newRig(b, 5).Cluster
	var clients []*Client
	for range 4 {
		clients = append(clients, benchClient(b, masters))
	}
	const contenders = 32
	ctx := context.Background()
	var mu sync.Mutex
	var waits []time.Duration
	per := (b.N + contenders - 1) / contenders
	var wg sync.WaitGroup
	b.ResetTimer()
	for w := range contenders {
		c := clients[w%len(clients)]
		wg.Go(func() {
			local := make([]time.Duration, 0, per)
			for range per {
				lctx, cancel := context.WithTimeout(ctx, time.Minute)
				start := time.Now()
				lease, err := c.Lock(lctx, "hot", 10*time.Second)
				cancel()
				if err != nil {
					b.Error(err)
					return
				}
				local = append(local, time.Since(start))
				if err := lease.Release(ctx); err != nil {
					b.Error(err)
					return
				}
			}
			mu.Lock()
			waits = append(waits, local...)
			mu.Unlock()
		})
	}
	wg.Wait()
	b.StopTimer()
	if len(waits) == 0 {
		return
	}
	slices.Sort(waits)
	b.ReportMetric(float64(len(waits))/b.Elapsed().Seconds(), "owner-changes/s")
	b.ReportMetric(float64(waits[len(waits)/2].Microseconds()), "wait-p50-µs")
	b.ReportMetric(float64(waits[len(waits)*99/100].Microseconds()), "wait-p99-µs")
}

// BenchmarkObserverOverhead is TryLock + Release from one goroutine with the
// default NopObserver and with an Observer that counts events: the cost of
// building the Event and its per-master results.
func BenchmarkObserverOverhead(b *testing.B) {
	masters := newRig(b, 5).Cluster
	var n atomicCounter
	for _, tc := range []struct {
		name string
		opts []Option
	}{
		{"none", nil},
		{"counting", []Option{WithObserver(ObserverFunc(func(context.Context, Event) { n.add() }))}},
	} {
		c := benchClient(b, masters, tc.opts...)
		b.Run(tc.name, func(b *testing.B) {
			ctx := context.Background()
			b.ReportAllocs()
			i := 0
			for b.Loop() {
				i++ // a key of its own: no wait for the masters not waited for on release
				lease, err := c.TryLock(ctx, fmt.Sprintf("bench:observer:%s:%d", tc.name, i), 10*time.Second)
				if err != nil {
					b.Fatal(err)
				}
				if err := lease.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
}

// atomicCounter counts events, safely from any goroutine.
type atomicCounter struct {
	mu sync.Mutex
	n  int
}

func (a *atomicCounter) add() { a.mu.Lock(); a.n++; a.mu.Unlock() }
