package suite

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"os"
	"path/filepath"
	"slices"
	"strings"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/jepsen-like/netproxy"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// SemaphoreLimit is the limit of the semaphore workload's semaphore.
const SemaphoreLimit = 2

// Result is the outcome of a run (results.json).
type Result struct {
	Backend      string             `json:"backend"`
	Workload     string             `json:"workload"`
	Nemeses      []string           `json:"nemeses"`
	Clients      int                `json:"clients"`
	Seed         uint64             `json:"seed"`
	TTLNS        time.Duration      `json:"ttl_ns"`
	NoQuarantine bool               `json:"no_quarantine"`
	NoFencing    bool               `json:"no_fencing"`
	Schedule     generator.Schedule `json:"schedule"`
	Faults       map[string]int     `json:"faults"`
	Processes    int                `json:"processes"`
	Acquired     int                `json:"acquired"`
	Results      []checker.Result   `json:"results"`
	Verdict      checker.Verdict    `json:"verdict"`
	// NemesisErrors are faults that could not be injected or healed.
	NemesisErrors string          `json:"nemesis_errors,omitempty"`
	Events        []history.Event `json:"-"`

	// DataLossTolerance is redlock.WithDataLossTolerance's f (0: none),
	// Quorum the clients' quorum, DataLossMasters the data-loss nemesis's f.
	DataLossTolerance int `json:"data_loss_tolerance"`
	Quorum            int `json:"quorum"`
	DataLossMasters   int `json:"data_loss_masters"`
}

// backendOnly are the faults only one backend injects, and why.
var backendOnly = map[string]struct{ backend, why string }{
	generator.NetPartition: {Docker, "it cuts a container's own network; local masters share the host's loopback"},
}

// Run runs cfg. It returns an error when the run could not be made (bad
// configuration, no redis-server, no Docker); a run that was made returns
// its Result, whatever the verdict.
func Run(ctx context.Context, cfg Config) (*Result, error) {
	if err := cfg.normalize(); err != nil {
		return nil, err
	}
	var names []string
	for _, n := range cfg.Nemeses {
		ns, _ := generator.ParseNemeses(n)
		names = append(names, ns...)
	}
	names = slices.Compact(names)
	// A fault one backend cannot inject: named, it is an error; in "all",
	// it is left out.
	for fault, only := range backendOnly {
		if cfg.Backend == only.backend || !slices.Contains(names, fault) {
			continue
		}
		for _, n := range cfg.Nemeses {
			for _, part := range strings.Split(n, ",") {
				if strings.TrimSpace(part) == fault {
					return nil, fmt.Errorf("%w: %s needs the %s backend (%s)", ErrInvalidArgument, fault, only.backend, only.why)
				}
			}
		}
		names = slices.DeleteFunc(names, func(n string) bool { return n == fault })
	}
	var kinds []string // data-loss: every kind the backend supports
	if cfg.Backend == Docker {
		kinds = slices.DeleteFunc(slices.Clone(generator.LossKinds), func(k string) bool { return k == generator.LossSnapshot })
	}
	sched, err := generator.Generate(generator.Config{Nemeses: names, Masters: cfg.Masters, Clients: cfg.Clients,
		Duration: cfg.Time, TTL: cfg.TTL, Seed: cfg.Seed, MajorityDown: cfg.MajorityDown,
		Quorum: cfg.Quorum(), LossMasters: cfg.DataLossMasters, LossKinds: kinds})
	if err != nil {
		return nil, err
	}
	tmp, err := os.MkdirTemp("", "jepsen-like-")
	if err != nil {
		return nil, fmt.Errorf("suite: %w", err)
	}
	defer os.RemoveAll(tmp)
	b, err := startBackend(ctx, cfg, names, tmp)
	if err != nil {
		return nil, err
	}
	defer b.Close()

	rec := history.NewRecorder()
	e := newEnv(b, rec)
	defer func() {
		for _, sl := range e.slots {
			for _, p := range sl.proxies {
				_ = p.Close()
			}
		}
	}()
	for range cfg.Clients {
		sl := &slot{cut: make(map[int]int), clock: &pauseClock{}}
		for _, m := range b.Masters() {
			p, err := netproxy.Start(m.Addr)
			if err != nil {
				return nil, err
			}
			sl.proxies = append(sl.proxies, p)
		}
		e.slots = append(e.slots, sl)
	}

	start := time.Now()
	// The clients run until the nemesis is done and --time has passed, plus
	// a TTL for the last holds to end; hard limit: four times --time plus
	// every step's longest wait.
	limit := 4 * cfg.Time
	for _, st := range sched.Steps {
		limit += st.After + st.Settle + 2*st.Hold + 2*cfg.TTL
		if st.Fault == generator.RestartLong || st.Fault == generator.RestartLongMerged { // its tries (a wait and two long TTLs each), and the long lease's life
			limit += nemesis.RestartLongTries*(st.Hold+2*st.Delay) + st.Delay
		}
	}
	runCtx, cancel := context.WithTimeout(ctx, limit)
	defer cancel()
	clientCtx, stopClients := context.WithCancel(runCtx)
	defer stopClients()

	var store workload.Store = workload.NewFencedStore()
	if cfg.Store != nil {
		store = workload.FencedStore{S: cfg.Store}
	}
	var harness *atomic.Uint64
	if cfg.NoFencing {
		store, harness = workload.NewPlainStore(), new(atomic.Uint64)
	}
	var set workload.SetStore
	if cfg.Workload == workload.Set {
		rs, stop, err := startSetStore(ctx)
		if err != nil {
			return nil, err
		}
		defer stop()
		set = rs
	}
	// What the episodes would set up where the clients see it is set up
	// before they start (nemesis.Prepare).
	nem := nemesis.New(e, rec, cfg.Clients, cfg.Logger)
	prepErr := nem.Prepare(runCtx, sched)
	var procs atomic.Int64
	var wg sync.WaitGroup
	for s := range cfg.Clients {
		wg.Go(func() {
			runSlot(clientCtx, cfg, e, s, sched.Lifetimes[s], rec, store, set, harness, &procs)
		})
	}
	if err := runBucketLoads(clientCtx, cfg, e, rec, &wg); err != nil {
		stopClients()
		wg.Wait()
		return nil, err
	}
	stopProgress := progress(cfg.Progress, start, sched, cfg.Time)
	nemErr := errors.Join(prepErr, nem.Run(runCtx, sched))
	sleepCtx(runCtx, max(cfg.TTL, time.Until(start.Add(cfg.Time))))
	stopClients()
	wg.Wait()
	stopProgress()
	healErr := b.Heal(context.WithoutCancel(ctx))
	if set != nil {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), cfg.TTL)
		_ = workload.ReadSet(rctx, set, rec, finalReader(rec.Events()))
		cancel()
	}

	events := rec.Events()
	// The stats checker: the faults asked for fired, fencing gave tokens.
	results := append(checker.Run(events), checker.Stats{Faults: names, Fencing: !cfg.NoFencing}.Check(events))
	res := &Result{
		Backend: cfg.Backend, Workload: cfg.Workload, Nemeses: names, Clients: cfg.Clients, Seed: cfg.Seed,
		TTLNS: cfg.TTL, NoQuarantine: cfg.NoQuarantine || cfg.DataLossTolerance > 0, NoFencing: cfg.NoFencing, Schedule: sched,
		DataLossTolerance: cfg.DataLossTolerance, Quorum: cfg.Quorum(), DataLossMasters: cfg.DataLossMasters,
		Faults: nem.Counts(), Processes: int(procs.Load()), Results: results, Verdict: checker.Overall(results), Events: events,
	}
	for _, ev := range events {
		if ev.F == history.Acquire && ev.Type == history.OK {
			res.Acquired++
		}
	}
	if err := errors.Join(nemErr, healErr); err != nil {
		res.NemesisErrors = err.Error()
	}
	if cfg.Out != "" {
		if err := res.Write(cfg.Out); err != nil {
			return res, err
		}
	}
	return res, nil
}

func startBackend(ctx context.Context, cfg Config, names []string, tmp string) (backend.Backend, error) {
	per := backend.NoPersistence
	if slices.Contains(names, generator.RestartAOF) {
		per = backend.AOFAlways
	}
	shim := ""
	if slices.Contains(names, generator.ClockJump) {
		var err error
		if shim, err = nemesis.BuildClockShim(tmp); err != nil {
			return nil, err
		}
	}
	return newBackend(ctx, cfg.Backend, cfg.Masters, per, shim)
}

// workloadKey is the lock key (and register name) of the lock, register
// and set workloads.
const workloadKey = "k"

// clientOptions are the redlock options of every client of a run but its
// clock: logger, fence buckets, quarantine or data-loss tolerance, fencing.
func clientOptions(cfg Config, logger *slog.Logger) []redlock.Option {
	opts := []redlock.Option{redlock.WithLogger(logger), redlock.WithFenceBuckets(FenceBuckets)}
	switch {
	case cfg.DataLossTolerance > 0: // no quarantine with it
		opts = append(opts, redlock.WithDataLossTolerance(cfg.DataLossTolerance))
	case cfg.NoQuarantine:
		opts = append(opts, redlock.WithoutQuarantine())
	}
	if cfg.NoFencing {
		opts = append(opts, redlock.WithFencing(false))
	}
	return opts
}

// runSlot runs the successive processes of slot s until ctx ends.
func runSlot(ctx context.Context, cfg Config, e *env, s int, lives []time.Duration, rec *history.Recorder,
	store workload.Store, set workload.SetStore, harness *atomic.Uint64, procs *atomic.Int64) {
	sl := e.slots[s]
	rng := rand.New(rand.NewPCG(cfg.Seed, uint64(s)+1))
	for k := 0; ctx.Err() == nil; k++ {
		sl.mu.Lock()
		quiet := sl.quiet
		sl.quiet = nil
		sl.mu.Unlock()
		for _, q := range quiet {
			select {
			case <-q:
			case <-ctx.Done():
				return
			}
		}
		life := lives[k%len(lives)]
		pctx, leave := context.WithCancel(ctx)
		sl.live(pctx, life, leave)
		sl.mu.Lock()
		sl.leave = leave
		id := s + sl.joined*cfg.Clients
		sl.joined++
		sl.mu.Unlock()
		procs.Add(1)
		if err := runProcess(pctx, cfg, e, s, id, rec, store, set, harness, rng); err != nil {
			cfg.Logger.Warn("process failed to start", "process", id, "err", err)
			sleepCtx(pctx, cfg.TTL)
		}
		leave()
	}
}

func sleepCtx(ctx context.Context, d time.Duration) {
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func runProcess(ctx context.Context, cfg Config, e *env, s, id int, rec *history.Recorder,
	store workload.Store, set workload.SetStore, harness *atomic.Uint64, rng *rand.Rand) error {
	sl := e.slots[s]
	clients := make([]redis.UniversalClient, len(sl.proxies))
	sends := &sendHook{key: workloadKey}
	company := make([]*companyHook, len(sl.proxies))
	for i, p := range sl.proxies {
		c := redis.NewClient(&redis.Options{
			Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1, PoolSize: 4,
			DialTimeout: cfg.TTL / 2, ReadTimeout: cfg.TTL, WriteTimeout: cfg.TTL,
		})
		c.AddHook(sends)
		company[i] = newCompanyHook(workloadKey)
		c.AddHook(company[i])
		clients[i] = c
	}
	var once sync.Once
	crash := func() {
		once.Do(func() {
			for _, c := range clients {
				_ = c.Close()
			}
		})
	}
	defer crash()
	sl.mu.Lock()
	sl.crash, sl.company = crash, company
	sl.mu.Unlock()
	defer func() {
		sl.mu.Lock()
		sl.crash, sl.company = nil, nil
		sl.mu.Unlock()
	}()
	// A process connects to every master before it starts (as a service
	// does at start-up), so that its first attempt does not pay the dials.
	for _, c := range clients {
		pctx, cancel := context.WithTimeout(ctx, cfg.TTL/4)
		_ = c.Ping(pctx).Err()
		cancel()
	}
	opts := append(clientOptions(cfg, cfg.Logger.With("process", id)), redlock.WithClock(sl.clock))
	p := &workload.Process{ID: id, Slot: s, Workload: cfg.Workload, Key: workloadKey, TTL: cfg.TTL, Rec: rec,
		Store: store, Hooks: e, Rand: rng, HarnessTokens: harness, SentAt: sends.sent, Set: set}
	if !cfg.NoFencing {
		p.Bucket = bucketLabel(workloadKey)
	}
	if cfg.Workload == workload.Semaphore {
		sem, err := semaphore.New(clients, "s", SemaphoreLimit, semaphore.WithTimeout(cfg.TTL), semaphore.WithLockOptions(opts...))
		if err != nil {
			return err
		}
		defer sem.Close()
		p.Key, p.Sem, p.Limit, p.Bucket = "s", sem, SemaphoreLimit, ""
	} else {
		lc, err := redlock.New(clients, opts...)
		if err != nil {
			return err
		}
		defer lc.Close()
		p.Client = lc
	}
	p.Run(ctx)
	return nil
}

// Write writes history.jsonl, results.json, report.html and, for a register
// run, register.html (porcupine's visualization) into dir.
func (r *Result) Write(dir string) error {
	if err := os.MkdirAll(dir, 0o755); err != nil {
		return fmt.Errorf("suite: %w", err)
	}
	if err := history.WriteFile(filepath.Join(dir, "history.jsonl"), r.Events); err != nil {
		return err
	}
	if err := writeJSON(filepath.Join(dir, "results.json"), r); err != nil {
		return err
	}
	return writeReport(dir, r)
}
