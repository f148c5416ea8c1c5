package redlock

import (
	"context"
	"fmt"
	"os"
	"runtime"
	"runtime/pprof"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// EnvSoak sets how long TestSoak runs: a duration ("10m"), or "1" for five
// minutes. Unset, it runs its short CI version (about 10 s).
const EnvSoak = "QUORUMLOCK_SOAK"

// EnvSoakHeapProfile names a file TestSoak writes a heap profile to at the
// end, with the clients still open, and PATH.middle at the middle sample
// (go tool pprof -sample_index=inuse_space -diff_base PATH.middle PATH).
// With it set, one allocation in 16 KiB is sampled instead of one in
// 512 KiB, fine enough to see a megabyte move.
const EnvSoakHeapProfile = "QUORUMLOCK_SOAK_HEAPPROFILE"

func soakDuration(t *testing.T) time.Duration {
	switch v := os.Getenv(EnvSoak); v {
	case "":
		return 8 * time.Second
	case "1":
		return 5 * time.Minute
	default:
		d, err := time.ParseDuration(v)
		if err != nil || d <= 0 {
			t.Fatalf("%s=%q: want a duration such as 10m, or 1", EnvSoak, v)
		}
		return d
	}
}

// soakSample is what TestSoak reports at start, middle and end.
type soakSample struct {
	when       string
	heap       uint64 // live heap after a GC, bytes
	goroutines int
	conns      uint32   // open connections of the clients' go-redis pools
	lockKeys   []int    // per master: keys under soak:
	counters   []int    // per master: quorumlock's own keys (bucket counters and the fixed keys)
	usedMemory []uint64 // per master: INFO memory used_memory, bytes
	leases     int64
	waits      int64
}

// TestSoak takes and releases distinct keys and contended keys from three
// clients on three real masters while masters are paused, resumed and one
// restarted without persistence, and checks that heap, goroutines and
// connections stay flat, that no lock key is left behind, and that each
// master holds at most DefaultFenceBuckets fencing counters (plus
// quorumlock's few fixed keys) however many distinct keys were locked.
func TestSoak(t *testing.T) {
	d := soakDuration(t)
	heapProfile := os.Getenv(EnvSoakHeapProfile)
	if heapProfile != "" {
		defer func(rate int) { runtime.MemProfileRate = rate }(runtime.MemProfileRate)
		runtime.MemProfileRate = 16 << 10
	}
	rc := newRig(t, 3)
	admin := rc.clients
	baseGoroutines := runtime.NumGoroutine()

	const nClients = 3
	var pools []*redis.Client
	var clients []*Client
	for range nClients {
		var masters []redis.UniversalClient
		for _, s := range rc.Servers {
			rdb := redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true, MaxRetries: -1,
				DialTimeout: 200 * time.Millisecond, ReadTimeout: time.Second, WriteTimeout: time.Second, PoolSize: 16})
			pools = append(pools, rdb)
			masters = append(masters, rdb)
		}
		c, err := New(masters, WithQuarantine(0))
		if err != nil {
			t.Fatal(err)
		}
		clients = append(clients, c)
	}
	closeAll := sync.OnceFunc(func() {
		for _, c := range clients {
			_ = c.Close()
		}
		for _, p := range pools {
			_ = p.Close()
		}
	})
	t.Cleanup(closeAll)

	var leases, waits, failures atomic.Int64
	var faultMu sync.Mutex // no master is paused while a sample counts keys
	sample := func(when string) soakSample {
		faultMu.Lock()
		defer faultMu.Unlock()
		runtime.GC()
		var ms runtime.MemStats
		runtime.ReadMemStats(&ms)
		s := soakSample{when: when, heap: ms.HeapAlloc, goroutines: runtime.NumGoroutine(),
			leases: leases.Load(), waits: waits.Load()}
		for _, p := range pools {
			s.conns += p.PoolStats().TotalConns
		}
		for _, a := range admin {
			s.lockKeys = append(s.lockKeys, countKeys(t, a, "soak:*"))
			s.counters = append(s.counters, countKeys(t, a, keys.Prefix+"*"))
			s.usedMemory = append(s.usedMemory, usedMemory(t, a))
		}
		return s
	}

	ctx, stop := context.WithCancel(context.Background())
	defer stop()
	var wg sync.WaitGroup
	for ci, c := range clients {
		for g := range 3 { // distinct keys
			wg.Go(func() {
				for n := 0; ctx.Err() == nil; n++ {
					actx, cancel := context.WithTimeout(ctx, 2*time.Second)
					l, err := c.TryLock(actx, fmt.Sprintf("soak:d:%d:%d:%d", ci, g, n), time.Minute)
					if err == nil {
						leases.Add(1)
						err = l.Release(actx)
					}
					cancel()
					if err != nil {
						failures.Add(1)
					}
				}
			})
		}
		wg.Go(func() { // contended waits on a few hot keys
			for n := 0; ctx.Err() == nil; n++ {
				actx, cancel := context.WithTimeout(ctx, 3*time.Second)
				l, err := c.Lock(actx, fmt.Sprintf("soak:hot:%d", n%4), 30*time.Second)
				if err == nil {
					waits.Add(1)
					err = l.Release(actx)
				}
				cancel()
				if err != nil {
					failures.Add(1)
				}
			}
		})
	}
	// Nemesis: pause one master for a moment, in turn; restart master 2
	// without persistence half way.
	wg.Go(func() {
		tick := time.NewTicker(max(d/8, time.Second))
		defer tick.Stop()
		restarted := false
		start := time.Now()
		for i := 0; ; i++ {
			select {
			case <-ctx.Done():
				return
			case <-tick.C:
			}
			s := rc.Servers[i%len(rc.Servers)]
			faultMu.Lock()
			if !restarted && time.Since(start) > d/2 {
				restarted = true
				if err := rc.Servers[2].Restart(clustertest.NoPersistence); err != nil {
					t.Errorf("restart: %v", err)
				}
			} else if err := s.Pause(); err == nil {
				time.Sleep(300 * time.Millisecond)
				_ = s.Resume()
			}
			faultMu.Unlock()
		}
	})

	time.Sleep(min(d/10, 5*time.Second)) // warm up: pools and workers started
	samples := []soakSample{sample("start")}
	time.Sleep(d/2 - min(d/10, 5*time.Second))
	samples = append(samples, sample("middle"))
	if heapProfile != "" {
		writeHeapProfile(t, heapProfile+".middle")
	}
	time.Sleep(d / 2)
	stop()
	wg.Wait()
	rc.ResumeAll()

	// Every lease was released; what failed attempts or unanswered
	// releases left is removed by the cleaners (a minute's TTL would keep
	// it long after this test).
	deadline := time.Now().Add(15 * time.Second)
	for {
		left := 0
		for _, a := range admin {
			left += countKeys(t, a, "soak:*")
		}
		if left == 0 {
			break
		}
		if time.Now().After(deadline) {
			t.Errorf("%d lock keys left behind 15 s after the workers stopped", left)
			break
		}
		time.Sleep(50 * time.Millisecond)
	}
	samples = append(samples, sample("end"))
	if heapProfile != "" {
		writeHeapProfile(t, heapProfile)
	}
	closeAll()
	afterClose := runtime.NumGoroutine()

	t.Logf("soak %v: %d leases on distinct keys, %d contended waits, %d failed attempts (pauses, restart, timeouts)",
		d, leases.Load(), waits.Load(), failures.Load())
	t.Logf("%-7s %9s %9s %10s %6s %-12s %-16s %s", "when", "leases", "heap KiB", "goroutines", "conns", "lock keys", "quorumlock keys", "used_memory KiB")
	for _, s := range samples {
		kib := make([]int, len(s.usedMemory))
		for i, b := range s.usedMemory {
			kib[i] = int(b / 1024)
		}
		t.Logf("%-7s %9d %9d %10d %6d %-12s %-16s %s", s.when, s.leases+s.waits, s.heap/1024, s.goroutines, s.conns, slash(s.lockKeys), slash(s.counters), slash(kib))
	}
	t.Logf("goroutines: %d before the clients, %d after Close", baseGoroutines, afterClose)

	mid, end := samples[1], samples[2]
	if leases.Load() == 0 || waits.Load() == 0 {
		t.Fatalf("nothing done: %d leases, %d waits", leases.Load(), waits.Load())
	}
	if end.heap > 2*mid.heap+16<<20 {
		t.Errorf("heap grew from %d KiB (middle) to %d KiB (end)", mid.heap/1024, end.heap/1024)
	}
	if maxConns := uint32(len(pools) * 16); end.conns > maxConns || mid.conns > maxConns {
		t.Errorf("connections %d (middle), %d (end): above the pools' %d", mid.conns, end.conns, maxConns)
	}
	for i, n := range end.counters {
		// The bucket counters, the certificate, scratch guard, lambda set,
		// floor, bucket count, and sync guards still in their TTL.
		if limit := DefaultFenceBuckets + 8; n > limit {
			t.Errorf("master %d holds %d quorumlock keys after %d distinct keys were locked: more than the %d buckets and fixed keys", i, n, leases.Load(), limit)
		}
	}
	if end.goroutines > mid.goroutines+20 {
		t.Errorf("goroutines grew from %d (middle) to %d (end, workers stopped)", mid.goroutines, end.goroutines)
	}
	if afterClose > baseGoroutines+5 {
		t.Errorf("%d goroutines after Close, %d before the clients", afterClose, baseGoroutines)
	}
}

// countKeys counts the keys matching pattern on one master.
func countKeys(t *testing.T, rdb redis.UniversalClient, pattern string) int {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	n := 0
	iter := rdb.Scan(ctx, 0, pattern, 1000).Iterator()
	for iter.Next(ctx) {
		n++
	}
	if err := iter.Err(); err != nil {
		t.Fatalf("SCAN %s: %v", pattern, err)
	}
	return n
}

// usedMemory reads a master's used_memory.
func usedMemory(t *testing.T, rdb redis.UniversalClient) uint64 {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 10*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "memory").Result()
	if err != nil {
		t.Fatalf("INFO memory: %v", err)
	}
	for _, line := range strings.Split(info, "\r\n") {
		if v, ok := strings.CutPrefix(line, "used_memory:"); ok {
			n, err := strconv.ParseUint(v, 10, 64)
			if err != nil {
				t.Fatalf("used_memory %q: %v", v, err)
			}
			return n
		}
	}
	t.Fatal("INFO memory has no used_memory")
	return 0
}

// slash formats per-master counts as 1/2/3.
func slash(v []int) string {
	parts := make([]string, len(v))
	for i, n := range v {
		parts[i] = strconv.Itoa(n)
	}
	return strings.Join(parts, "/")
}

// writeHeapProfile writes the live heap (after a GC) to path.
func writeHeapProfile(t *testing.T, path string) {
	t.Helper()
	f, err := os.Create(path)
	if err != nil {
		t.Fatalf("%s: %v", EnvSoakHeapProfile, err)
	}
	defer f.Close()
	runtime.GC()
	if err := pprof.Lookup("heap").WriteTo(f, 0); err != nil {
		t.Fatalf("%s: %v", EnvSoakHeapProfile, err)
	}
}
