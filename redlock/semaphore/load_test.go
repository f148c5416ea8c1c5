package semaphore

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// loadResult is what a load run saw.
type loadResult struct {
	maxInside  int64
	full, mean float64 // share of samples with every slot in use; mean occupancy / limit
	samples    int
	acquired   int64
}

// runLoad runs goroutines workers for d over the semaphores (worker g uses
// sems[g%len(sems)]): each Acquires, enters a critical section guarded by an
// independent counter for work, leaves, and releases. A sampler reads the
// counter every millisecond.
func runLoad(t *testing.T, sems []*Semaphore, goroutines int, d, work time.Duration, during func(elapsed <-chan time.Duration)) loadResult {
	t.Helper()
	limit := sems[0].Limit()
	var tr maxTracker
	var acquired atomic.Int64
	ctx, cancel := context.WithTimeout(context.Background(), d)
	defer cancel()
	var wg sync.WaitGroup
	errs := make(chan error, goroutines)
	for g := range goroutines {
		s := sems[g%len(sems)]
		wg.Add(1)
		go func() {
			defer wg.Done()
			for ctx.Err() == nil {
				p, err := s.Acquire(ctx)
				if err != nil {
					if ctx.Err() == nil {
						errs <- err
						return
					}
					return
				}
				acquired.Add(1)
				tr.enter()
				select { // work, cut short when the permit ends
				case <-time.After(work):
				case <-p.Done():
				}
				tr.leave()
				rctx, rcancel := context.WithTimeout(context.Background(), 2*time.Second)
				err = p.Release(rctx)
				rcancel()
				if errors.Is(err, ErrLost) {
					errs <- err
					return
				}
			}
		}()
	}
	var res loadResult
	var sum, full int64
	buckets, bucketN := map[int]int64{}, map[int]int64{}
	tick := time.NewTicker(time.Millisecond)
	start := time.Now()
	elapsed := make(chan time.Duration, 1)
	var dwg sync.WaitGroup
	if during != nil {
		dwg.Add(1)
		go func() { defer dwg.Done(); during(elapsed) }()
	}
	// Skip the first 100 ms: the workers are starting.
	for ctx.Err() == nil {
		select {
		case <-ctx.Done():
		case <-tick.C:
			e := time.Since(start)
			select {
			case elapsed <- e:
			default:
			}
			if e < 100*time.Millisecond {
				continue
			}
			n := tr.inside.Load()
			buckets[int(e/(500*time.Millisecond))] += n
			bucketN[int(e/(500*time.Millisecond))]++
			res.samples++
			sum += n
			if n >= int64(limit) {
				full++
			}
		}
	}
	tick.Stop()
	close(elapsed)
	dwg.Wait()
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Errorf("worker: %v", err)
	}
	res.maxInside = tr.max.Load()
	res.acquired = acquired.Load()
	if res.samples > 0 {
		res.full = float64(full) / float64(res.samples)
		res.mean = float64(sum) / float64(res.samples) / float64(limit)
	}
	var per []string
	for i := 0; bucketN[i] > 0; i++ {
		per = append(per, fmt.Sprintf("%.0f%%", 100*float64(buckets[i])/float64(bucketN[i])/float64(limit)))
	}
	t.Logf("mean occupancy per 500 ms: %v", per)
	t.Logf("%d acquisitions, max inside %d of %d, all %d in use %.0f%% of %d samples, mean occupancy %.0f%%",
		res.acquired, res.maxInside, limit, limit, 100*res.full, res.samples, 100*res.mean)
	return res
}

// sems builds n semaphores (n clients) over the same masters.
func sems(t *testing.T, masters []redis.UniversalClient, name string, limit, n int, opts ...Option) []*Semaphore {
	t.Helper()
	out := make([]*Semaphore, n)
	for i := range out {
		out[i] = newSem(t, masters, name, limit, opts...)
	}
	return out
}

// checkLoad asserts the limit and a high occupancy (the time-averaged share
// of the limit in use, sampled every millisecond), then that a sixth
// TryAcquire is refused while five are held.
func checkLoad(t *testing.T, ss []*Semaphore, res loadResult, minMean float64) {
	t.Helper()
	limit := ss[0].Limit()
	if res.maxInside > int64(limit) {
		t.Errorf("%d holders inside at once; limit %d", res.maxInside, limit)
	}
	if res.maxInside < int64(limit) {
		t.Errorf("never more than %d inside; the limit %d was never reached", res.maxInside, limit)
	}
	if res.mean < minMean {
		t.Errorf("the %d slots were in use %.0f%% of the time on average; want at least %.0f%%", limit, 100*res.mean, 100*minMean)
	}
	ps := acquireN(t, ss[0], limit)
	defer releaseAll(t, ps)
	for _, p := range ps {
		if err := p.Err(); err != nil {
			t.Fatalf("a permit ended while the %d were taken: %v", limit, err)
		}
	}
	if _, err := ss[1].TryAcquire(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrBusy) {
		t.Errorf("TryAcquire with %d held: %v, want ErrBusy", limit, err)
	}
}

// acquireN takes n permits with Acquire (others may still be releasing).
func acquireN(t *testing.T, s *Semaphore, n int) []*Permit {
	t.Helper()
	var out []*Permit
	for range n {
		p, err := s.Acquire(ctxFor(t, 10*time.Second))
		if err != nil {
			releaseAll(t, out)
			t.Fatalf("Acquire: %v", err)
		}
		out = append(out, p)
	}
	return out
}

const (
	loadGoroutines = 64
	loadLimit      = 5
	loadDuration   = 3 * time.Second
	loadWork       = 100 * time.Millisecond
)

func TestLoadGuarded(t *testing.T) {
	_, m := realMasters(t, 1)
	ss := sems(t, m, "load-guarded", loadLimit, 4, WithVariant(Guarded), WithTimeout(10*time.Second)) // not about timeouts: a loaded CI machine must not expire a permit mid-section
	res := runLoad(t, ss, loadGoroutines, loadDuration, loadWork, nil)
	checkLoad(t, ss, res, 0.6)
}

func TestLoadAtomicOneMaster(t *testing.T) {
	_, m := realMasters(t, 1)
	ss := sems(t, m, "load-atomic1", loadLimit, 4, WithTimeout(10*time.Second)) // not about timeouts: a loaded CI machine must not expire a permit mid-section
	res := runLoad(t, ss, loadGoroutines, loadDuration, loadWork, nil)
	checkLoad(t, ss, res, 0.6)
}

// Five masters, two of them SIGSTOPped from 1 s to 2 s into the run.
func TestLoadAtomicFiveMasters(t *testing.T) {
	c, m := realMasters(t, 5)
	ss := sems(t, m, "load-atomic5", loadLimit, 4, WithTimeout(10*time.Second)) // not about timeouts: a loaded CI machine must not expire a permit mid-section
	paused := false
	res := runLoad(t, ss, loadGoroutines, loadDuration, loadWork, func(elapsed <-chan time.Duration) {
		for e := range elapsed {
			switch {
			case !paused && e >= time.Second && e < 2*time.Second:
				for _, i := range []int{1, 3} {
					if err := c.Servers[i].Pause(); err != nil {
						t.Error(err)
					}
				}
				paused = true
			case paused && e >= 2*time.Second:
				c.ResumeAll()
				paused = false
			}
		}
		c.ResumeAll()
	})
	if !t.Failed() {
		// and the sixth is refused while two masters are stopped
		for _, i := range []int{0, 4} {
			if err := c.Servers[i].Pause(); err != nil {
				t.Fatal(err)
			}
		}
		checkLoad(t, ss, res, 0.4)
	}
}
