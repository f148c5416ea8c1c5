package main

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"slices"
	"sync"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// Mode is a kind of concurrency control.
type Mode string

// The three modes of the book's experiment.
const (
	Watch  Mode = "watch"  // WATCH/MULTI/EXEC
	Coarse Mode = "coarse" // one lock on the market
	Fine   Mode = "fine"   // a lock per item, plus the buyer's funds to buy
)

// Config is one row of the experiment.
type Config struct {
	Mode            Mode
	Listers, Buyers int
	// LockMasters is how many masters hold the locks: 1 (the data master,
	// as in the book) or 5. 0 for Watch.
	LockMasters int
	// Duration of the run. Every worker also stops when its listing or
	// buying budget (ItemsPerLister, MaxBuys) is spent.
	Duration       time.Duration
	ItemsPerLister int
	MaxBuys        int // per buyer
	TTL            time.Duration
}

func (c Config) label() string {
	locks := "–"
	if c.Mode != Watch {
		locks = fmt.Sprintf("quorumlock, %d master", c.LockMasters)
		if c.LockMasters > 1 {
			locks += "s"
		}
	}
	return fmt.Sprintf("%s %dx%d (%s)", c.Mode, c.Listers, c.Buyers, locks)
}

// Result is what one run measured.
type Result struct {
	Config
	Window       time.Duration
	Listed, Sold int64
	// Retries: aborted EXECs (watch) or failed lock calls started again.
	Retries int64
	// Missed: purchases that found their item gone or repriced.
	Missed int64
	// Lost: operations whose lease ended before their writes, which were
	// then not sent (a holder slower than its TTL; expected 0).
	Lost         int64
	Errors       int64
	FirstError   string
	SoldValue    int64
	Mean, P99    time.Duration // of successful purchases, retries and lock waits included
	Balance      Balance
	Conservation error // nil when funds and items were conserved
}

// OpsPerSec is listings plus sales per second.
func (r Result) OpsPerSec() float64 { return float64(r.Listed+r.Sold) / r.Window.Seconds() }

type counters struct {
	listed, sold, retries, missed, lost, errors, soldValue atomic.Int64
	mu                                                     sync.Mutex
	firstErr                                               error
	lat                                                    []time.Duration
}

func (c *counters) fail(err error) {
	c.errors.Add(1)
	c.mu.Lock()
	if c.firstErr == nil {
		c.firstErr = err
	}
	c.mu.Unlock()
}

// Run seeds a market under prefix on data, runs cfg's listers and buyers
// with locks on lockMasters[:cfg.LockMasters], checks conservation, and
// clears the market. progress, if set, is called about twice a second.
func Run(ctx context.Context, data *redis.Client, lockMasters []redis.UniversalClient, cfg Config, prefix string, progress func(Result)) (Result, error) {
	if cfg.Listers < 1 || cfg.Buyers < 1 || cfg.ItemsPerLister < 1 || cfg.MaxBuys < 1 || cfg.Duration <= 0 {
		return Result{}, fmt.Errorf("marketplace: invalid config %+v", cfg)
	}
	m := &Market{rdb: data, prefix: prefix, listers: cfg.Listers, buyers: cfg.Buyers,
		itemsPerLister: cfg.ItemsPerLister, funds: 1_000_000_000}
	if err := m.Seed(ctx); err != nil {
		return Result{}, err
	}
	defer func() { _ = m.Clear(context.WithoutCancel(ctx)) }()

	var st strategy = watchStrategy{m}
	if cfg.Mode != Watch {
		if cfg.LockMasters < 1 || cfg.LockMasters > len(lockMasters) {
			return Result{}, fmt.Errorf("marketplace: %d lock masters of %d", cfg.LockMasters, len(lockMasters))
		}
		c, err := redlock.New(lockMasters[:cfg.LockMasters])
		if err != nil {
			return Result{}, err
		}
		st = &lockStrategy{m: m, c: c, ttl: cfg.TTL, fine: cfg.Mode == Fine}
	}
	defer func() { _ = st.close() }()

	var cnt counters
	wctx, cancel := context.WithTimeout(ctx, cfg.Duration)
	defer cancel()
	dctx := context.WithoutCancel(ctx)
	start := time.Now()
	var wg sync.WaitGroup
	for i := range cfg.Listers {
		wg.Go(func() { lister(wctx, dctx, m, st, seller(i), cfg.ItemsPerLister, &cnt) })
	}
	for j := range cfg.Buyers {
		wg.Go(func() { buyerLoop(wctx, dctx, m, st, buyer(j), cfg.MaxBuys, &cnt) })
	}
	done := make(chan struct{})
	go func() { wg.Wait(); close(done) }()
	tick := time.NewTicker(500 * time.Millisecond)
	defer tick.Stop()
	snap := func() Result {
		return Result{Config: cfg, Window: time.Since(start), Listed: cnt.listed.Load(), Sold: cnt.sold.Load(),
			Retries: cnt.retries.Load(), Missed: cnt.missed.Load(), Lost: cnt.lost.Load(), Errors: cnt.errors.Load()}
	}
wait:
	for {
		select {
		case <-done:
			break wait
		case <-tick.C:
			if progress != nil {
				progress(snap())
			}
		}
	}
	r := snap()
	r.SoldValue = cnt.soldValue.Load()
	if cnt.firstErr != nil {
		r.FirstError = cnt.firstErr.Error()
	}
	if len(cnt.lat) > 0 {
		slices.Sort(cnt.lat)
		var sum time.Duration
		for _, d := range cnt.lat {
			sum += d
		}
		r.Mean = sum / time.Duration(len(cnt.lat))
		r.P99 = cnt.lat[(len(cnt.lat)*99+99)/100-1]
	}
	var err error
	r.Balance, err = m.Check(dctx, int(r.Listed), int(r.Sold), r.SoldValue)
	if err != nil && !errors.Is(err, ErrNotConserved) {
		return r, err
	}
	r.Conservation = err
	return r, nil
}

// lister moves items from seller s's inventory to the market at random
// prices until the window ends or the inventory is empty.
func lister(ctx, dctx context.Context, m *Market, st strategy, s string, budget int, cnt *counters) {
	for range budget {
		if ctx.Err() != nil {
			return
		}
		item, err := m.rdb.SRandMember(dctx, m.invKey(s)).Result()
		if errors.Is(err, redis.Nil) {
			return // everything listed
		}
		if err != nil {
			cnt.fail(err)
			return
		}
		retries, err := st.list(ctx, dctx, s, item, 1+rand.Int64N(100))
		cnt.retries.Add(int64(retries))
		switch {
		case err == nil:
			cnt.listed.Add(1)
		case errors.Is(err, errLost):
			cnt.lost.Add(1)
		case ctx.Err() != nil:
			return
		default:
			cnt.fail(err)
			return
		}
	}
}

// buyerLoop buys random items off the market for b until the window ends.
func buyerLoop(ctx, dctx context.Context, m *Market, st strategy, b string, budget int, cnt *counters) {
	var lat []time.Duration
	defer func() {
		cnt.mu.Lock()
		cnt.lat = append(cnt.lat, lat...)
		cnt.mu.Unlock()
	}()
	for range budget {
		if ctx.Err() != nil {
			return
		}
		zs, err := m.rdb.ZRandMemberWithScores(dctx, m.marketKey(), 1).Result()
		if err != nil {
			cnt.fail(err)
			return
		}
		if len(zs) == 0 { // nothing listed yet
			select {
			case <-ctx.Done():
				return
			case <-time.After(time.Millisecond):
			}
			continue
		}
		item, s, ok := splitMember(zs[0].Member.(string))
		if !ok {
			cnt.fail(fmt.Errorf("malformed market member %q", zs[0].Member))
			return
		}
		price := int64(zs[0].Score)
		t0 := time.Now()
		retries, err := st.buy(ctx, dctx, b, s, item, price)
		cnt.retries.Add(int64(retries))
		switch {
		case err == nil:
			cnt.sold.Add(1)
			cnt.soldValue.Add(price)
			lat = append(lat, time.Since(t0))
		case errors.Is(err, errGone):
			cnt.missed.Add(1)
		case errors.Is(err, errLost):
			cnt.lost.Add(1)
		case ctx.Err() != nil:
			return
		default:
			cnt.fail(err)
			return
		}
	}
}
