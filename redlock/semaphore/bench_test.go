package semaphore

import (
	"context"
	"testing"

	"github.com/redis/go-redis/v9"
)

// BenchmarkTryAcquireRelease measures one TryAcquire and its Release, one
// goroutine, per variant on one real master, and Atomic on five (the only
// variant that takes several).
//
//	go test -run '^$' -bench TryAcquireRelease -benchtime 3s ./redlock/semaphore/
func BenchmarkTryAcquireRelease(b *testing.B) {
	_, one := realMasters(b, 1)
	_, five := realMasters(b, 5)
	run := func(name string, masters []redis.UniversalClient, v Variant) {
		b.Run(name, func(b *testing.B) {
			s := newSem(b, masters, "bench-"+name, 5, WithVariant(v))
			ctx := context.Background()
			for b.Loop() {
				p, err := s.TryAcquire(ctx)
				if err != nil {
					b.Fatal(err)
				}
				if err := p.Release(ctx); err != nil {
					b.Fatal(err)
				}
			}
		})
	}
	for _, v := range variants {
		run(v.String()+"/1master", one, v)
	}
	run("Atomic/5masters", five, Atomic)
}

// BenchmarkTryAcquireReleaseParallel is the same from 16 goroutines of one
// Semaphore (limit 64, so never busy): pairs per second.
//
//	go test -run '^$' -bench TryAcquireReleaseParallel -benchtime 3s ./redlock/semaphore/
func BenchmarkTryAcquireReleaseParallel(b *testing.B) {
	_, one := realMasters(b, 1)
	_, five := realMasters(b, 5)
	run := func(name string, masters []redis.UniversalClient, v Variant) {
		b.Run(name, func(b *testing.B) {
			s := newSem(b, masters, "pbench-"+name, 64, WithVariant(v))
			ctx := context.Background()
			b.SetParallelism(8) // 16 goroutines on 2 CPUs
			b.RunParallel(func(pb *testing.PB) {
				for pb.Next() {
					p, err := s.TryAcquire(ctx)
					if err != nil {
						b.Error(err)
						return
					}
					if err := p.Release(ctx); err != nil {
						b.Error(err)
						return
					}
				}
			})
			b.ReportMetric(float64(b.N)/b.Elapsed().Seconds(), "pairs/s")
		})
	}
	for _, v := range variants {
		run(v.String()+"/1master", one, v)
	}
	run("Atomic/5masters", five, Atomic)
}
