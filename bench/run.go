package bench

import (
	"context"
	"fmt"
	"runtime"
	"slices"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
)

const (
	// opTimeout bounds one operation of an uncontended scenario and every
	// release.
	opTimeout = 5 * time.Second
	// drainTimeout bounds the wait for workers after a window closed (the
	// paused masters are resumed first, so they finish quickly).
	drainTimeout = 30 * time.Second
	warmupOps    = 10
)

// Run measures every configured library in every configured scenario on
// servers (five masters for the figures in docs; at least three), calling
// emit (if not nil) after each row. It pauses and resumes servers; it
// returns the rows and the first error that stopped it (a library that
// fails in a scenario is a row with FirstError, not an error). Errors from
// cfg match ErrInvalidArgument.
func Run(ctx context.Context, servers []*clustertest.Server, cfg Config, emit func(Row)) ([]Row, error) {
	cfg, scs, err := cfg.withDefaults()
	if err != nil {
		return nil, err
	}
	if len(servers) < 3 {
		return nil, invalid("%d masters; at least 3 are needed", len(servers))
	}
	for _, sc := range scs {
		if sc.Stalled >= (len(servers)+1)/2 {
			return nil, invalid("scenario %s stalls %d of %d masters: no majority left", sc.Name, sc.Stalled, len(servers))
		}
	}
	runID := strconv.FormatInt(time.Now().UnixNano(), 36)
	var rows []Row
	for _, sc := range scs {
		for rep := 1; rep <= cfg.Repeat; rep++ {
			for _, lib := range cfg.Libraries {
				if err := ctx.Err(); err != nil {
					return rows, err
				}
				r := Row{
					Scenario: sc.Name, Library: lib, Goroutines: sc.Goroutines, Clients: max(sc.Clients, 1), Stalled: sc.Stalled,
					GoRedis: "defaults", TTLMs: cfg.TTL.Milliseconds(),
				}
				if cfg.Repeat > 1 {
					r.Rep = rep
				}
				if sc.CtxTimeouts {
					r.GoRedis = "ContextTimeoutEnabled"
				}
				if lib == Redislock && sc.Stalled > 0 {
					r.Skipped = "one master (never a stalled one)"
				} else {
					runOne(ctx, servers, lib, sc, cfg, runID+"."+strconv.Itoa(rep), &r)
				}
				if cfg.Progress != nil {
					cfg.Progress(progressLine(r))
				}
				rows = append(rows, r)
				if emit != nil {
					emit(r)
				}
			}
		}
	}
	return rows, nil
}

func progressLine(r Row) string {
	if r.Skipped != "" {
		return fmt.Sprintf("%-18s %-21s skipped: %s", r.Scenario, r.Library, r.Skipped)
	}
	lib := r.Library
	if r.Rep > 0 {
		lib += fmt.Sprintf(" #%d", r.Rep)
	}
	s := fmt.Sprintf("%-18s %-21s %9.0f ops/s  p50 %s  p99 %s  cpu %.0f+%.0f µs/op  failed %d",
		r.Scenario, lib, r.OpsPerSec, fmtUS(r.AcqP50US), fmtUS(r.AcqP99US), r.CPUClientUS, r.CPUServersUS, r.Failed)
	if r.FirstError != "" {
		s += "  (" + r.FirstError + ")"
	}
	return s
}

// sample is one finished operation of one worker.
type sample struct {
	end     time.Time     // when it counted: release done (uncontended), lock held (hot key)
	acquire time.Duration // calling lock to holding
	pair    time.Duration // calling lock to released (uncontended)
	failed  bool
	err     error
	change  bool // hot key: the previous holder was another goroutine
}

// runOne runs lib in sc and fills r.
func runOne(ctx context.Context, servers []*clustertest.Server, lib string, sc Scenario, cfg Config, runID string, r *Row) {
	fail := func(err error) { r.FirstError = err.Error() }
	pids := make([]int, len(servers))
	for i, s := range servers {
		pids[i] = s.PID()
	}
	// Every client of the same masters must use the same fence-bucket count,
	// which the masters record: forget it between libraries that differ
	// (the bench's keys are fresh each run, so no key's tokens can go back).
	if err := forgetFenceBuckets(ctx, servers); err != nil {
		fail(err)
		return
	}
	// One locker per simulated process, each over its own go-redis clients.
	lks := make([]locker, max(sc.Clients, 1))
	prefix := "lockbench:" + runID + ":" + sc.Name + ":" + lib + ":"
	for p := range lks {
		rdbs := make([]*redis.Client, len(servers))
		for i, s := range servers {
			rdbs[i] = redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: sc.CtxTimeouts})
		}
		defer func() {
			for _, c := range rdbs {
				_ = c.Close()
			}
		}()
		lk, err := newLocker(lib, rdbs, cfg.TTL)
		if err != nil {
			fail(err)
			return
		}
		defer func() { _ = lk.close() }()
		if err := warmUp(ctx, lk, prefix+"warm"+strconv.Itoa(p)); err != nil {
			fail(fmt.Errorf("warm-up: %w", err))
			return
		}
		lks[p] = lk
	}

	stalled := servers[len(servers)-sc.Stalled:]
	for _, s := range stalled {
		if err := s.Pause(); err != nil {
			fail(err)
			return
		}
	}
	resumed := false
	resume := func() {
		if resumed {
			return
		}
		resumed = true
		for _, s := range stalled {
			_ = s.Resume()
		}
	}
	defer resume()

	runtime.GC()
	wctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	before, err := snapshot(pids)
	if err != nil {
		fail(err)
		return
	}
	start := time.Now()

	var (
		budget   atomic.Int64 // operations left to start
		started  atomic.Int64
		inCS     atomic.Int32
		last     atomic.Int64
		overlaps atomic.Int64
		wg       sync.WaitGroup
	)
	budget.Store(int64(cfg.MaxOps))
	last.Store(-1)
	perWorker := make([][]sample, sc.Goroutines)
	for w := range sc.Goroutines {
		wg.Go(func() {
			key := prefix + strconv.Itoa(w)
			if sc.HotKey {
				key = prefix + "hot"
			}
			var out []sample
			for wctx.Err() == nil && budget.Add(-1) >= 0 {
				started.Add(1)
				var s sample
				if sc.HotKey {
					var stop bool
					s, stop = hotOp(ctx, wctx, lks[w%len(lks)], key, int64(w), &inCS, &last, &overlaps)
					if stop {
						started.Add(-1)
						break
					}
				} else {
					s = uncontendedOp(ctx, lks[w%len(lks)], key)
				}
				out = append(out, s)
			}
			perWorker[w] = out
		})
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	select {
	case <-wctx.Done():
	case <-done: // MaxOps reached
	}
	end := time.Now()
	after, err := snapshot(pids)
	cancel()
	resume()
	select {
	case <-done:
	case <-time.After(drainTimeout):
		fail(fmt.Errorf("workers still running %v after the window closed", drainTimeout))
		return
	}
	if err != nil {
		fail(err)
		return
	}
	summarize(r, sc, len(lks), perWorker, start, end, started.Load(), overlaps.Load(), after.client-before.client, after.servers-before.servers)
}

// forgetFenceBuckets deletes the fence-bucket count the masters recorded.
func forgetFenceBuckets(ctx context.Context, servers []*clustertest.Server) error {
	for _, s := range servers {
		c := redis.NewClient(&redis.Options{Addr: s.Addr})
		err := c.Del(ctx, keys.FenceBuckets).Err()
		_ = c.Close()
		if err != nil {
			return fmt.Errorf("forget the fence-bucket count on %s: %w", s.Addr, err)
		}
	}
	return nil
}

// warmUp opens the connections and loads the scripts: warmupOps lock+unlock
// pairs. A loaded machine can make an attempt miss its per-master timeout,
// so it tolerates failures, up to 5·warmupOps attempts within opTimeout.
func warmUp(ctx context.Context, lk locker, key string) error {
	deadline := time.Now().Add(opTimeout)
	var last error
	ok := 0
	for n := range 5 * warmupOps {
		octx, cancel := context.WithDeadline(ctx, deadline)
		// A fresh key each time: a failed attempt of some libraries leaves
		// its key on a few masters until the TTL ends.
		h, err := lk.lock(octx, key+":"+strconv.Itoa(n), false)
		if err == nil {
			err = h.release(octx)
		}
		cancel()
		if err == nil {
			if ok++; ok == warmupOps {
				return nil
			}
			continue
		}
		last = err
		if ctx.Err() != nil || time.Now().After(deadline) {
			break
		}
	}
	return last
}

func uncontendedOp(ctx context.Context, lk locker, key string) sample {
	octx, cancel := context.WithTimeout(ctx, opTimeout)
	defer cancel()
	t0 := time.Now()
	h, err := lk.lock(octx, key, false)
	t1 := time.Now()
	if err != nil {
		return sample{end: t1, failed: true, err: err}
	}
	err = h.release(octx)
	t2 := time.Now()
	return sample{end: t2, acquire: t1.Sub(t0), pair: t2.Sub(t0), failed: err != nil, err: err}
}

// hotOp is one turn on the hot key: wait for it (until the window ends),
// hold it CriticalSection, release. stop reports that the window ended
// while waiting.
func hotOp(ctx, wctx context.Context, lk locker, key string, me int64, inCS *atomic.Int32, last, overlaps *atomic.Int64) (s sample, stop bool) {
	t0 := time.Now()
	h, err := lk.lock(wctx, key, true)
	t1 := time.Now()
	if err != nil {
		if wctx.Err() != nil {
			return s, true
		}
		return sample{end: t1, failed: true, err: err}, false
	}
	if inCS.Add(1) != 1 {
		overlaps.Add(1)
	}
	prev := last.Swap(me)
	time.Sleep(CriticalSection)
	inCS.Add(-1)
	rctx, cancel := context.WithTimeout(ctx, opTimeout)
	err = h.release(rctx)
	cancel()
	return sample{end: t1, acquire: t1.Sub(t0), change: prev != me, failed: err != nil, err: err}, false
}

func summarize(r *Row, sc Scenario, clients int, perWorker [][]sample, start, end time.Time, started, overlaps int64, client, servers time.Duration) {
	window := end.Sub(start)
	r.WindowS = window.Seconds()
	var acq, pair []time.Duration
	shares := make([]int, len(perWorker))
	counted := 0
	for w, out := range perWorker {
		for _, s := range out {
			if s.end.After(end) {
				continue
			}
			counted++
			if s.failed {
				r.Failed++
				if r.FirstError == "" && s.err != nil {
					r.FirstError = s.err.Error()
				}
				if s.acquire == 0 {
					continue
				}
			}
			r.Ops++
			shares[w]++
			acq = append(acq, s.acquire)
			if s.pair > 0 {
				pair = append(pair, s.pair)
			}
			if s.change {
				r.OwnerChanges++
			}
		}
	}
	r.InFlight = int(started) - counted
	r.OpsPerSec = float64(r.Ops) / window.Seconds()
	r.AcqP50US, r.AcqP99US, r.AcqMaxUS = latencies(acq)
	r.PairP50US, _, _ = latencies(pair)
	if r.Ops > 0 {
		r.CPUClientUS = micros(client) / float64(r.Ops)
		r.CPUServersUS = micros(servers) / float64(r.Ops)
	}
	r.Overlaps = int(overlaps)
	if sc.HotKey {
		r.OwnerChangesPerSec = float64(r.OwnerChanges) / window.Seconds()
		r.ShareMin, r.ShareMax = shares[0], shares[0]
		for _, n := range shares {
			r.ShareMin, r.ShareMax = min(r.ShareMin, n), max(r.ShareMax, n)
			if n == 0 {
				r.Starved++
			}
		}
		if r.ShareMin > 0 {
			r.ShareMaxMin = float64(r.ShareMax) / float64(r.ShareMin)
		}
		if clients > 1 {
			per := make([]int, clients)
			for w, n := range shares {
				per[w%clients] += n
			}
			r.ClientShareMin, r.ClientShareMax = slices.Min(per), slices.Max(per)
		}
	}
}
