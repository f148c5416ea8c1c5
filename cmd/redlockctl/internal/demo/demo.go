package demo

import (
	"context"
	"errors"
	"fmt"
	"io"
	"strconv"
	"sync"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/redlock"
)

// Config sizes the demo.
type Config struct {
	Masters    int           // default 5
	Processes  int           // Clients contending, default 2
	Workers    int           // goroutines per Client, default 4
	Increments int           // critical sections per worker and phase, default 10
	TTL        time.Duration // default 2 s
}

func (c *Config) defaults() error {
	set := func(v *int, d int) {
		if *v == 0 {
			*v = d
		}
	}
	set(&c.Masters, 5)
	set(&c.Processes, 2)
	set(&c.Workers, 4)
	set(&c.Increments, 10)
	if c.TTL == 0 {
		c.TTL = 2 * time.Second
	}
	switch {
	case c.Masters < 3 || c.Masters > quorum.MaxMasters:
		return fmt.Errorf("masters %d: the demo needs 3 to %d", c.Masters, quorum.MaxMasters)
	case c.Processes < 1 || c.Workers < 1 || c.Increments < 1:
		return errors.New("processes, workers and increments must be positive")
	case c.TTL < 100*time.Millisecond:
		return fmt.Errorf("ttl %v is below 100ms", c.TTL)
	}
	return nil
}

// Result is what the demo measured; OK is true when every check passed.
type Result struct {
	OK       bool
	Failures []string
}

const (
	lockKey  = "account:42"
	resource = "account:42/balance"
)

// Run runs the demo, narrating to out.
func Run(ctx context.Context, out io.Writer, cfg Config) (Result, error) {
	if err := cfg.defaults(); err != nil {
		return Result{}, err
	}
	ms, err := startMasters(cfg.Masters)
	if err != nil {
		return Result{}, fmt.Errorf("start embedded masters: %w", err)
	}
	defer ms.close()
	d := &demo{cfg: cfg, out: out, ms: ms, store: fencing.NewMemoryStore()}
	defer d.closeClients()
	for range cfg.Processes {
		cs := ms.clients()
		d.conns = append(d.conns, cs...)
		// Embedded masters never restart, so restart quarantine has nothing to
		// do. A per-master timeout of 1 s (not TTL/10 = 200 ms) keeps a busy
		// machine (the demo under -race on two shared cores) from failing a
		// release that merely answered late.
		c, err := redlock.New(cs, redlock.WithoutQuarantine(), redlock.WithMasterTimeout(masterTimeout))
		if err != nil {
			return Result{}, err
		}
		d.clients = append(d.clients, c)
	}
	fmt.Fprintf(out, "quorumlock demo: %d embedded Redis masters (miniredis in this process, each behind a pausable proxy).\n", cfg.Masters)
	fmt.Fprintf(out, "Steps 1-3 use master 0 alone, as a single-instance lock would; steps 4-7 use the quorum lock.\n\n")

	single := redis.NewClient(&redis.Options{Addr: ms.servers[0].Addr(), MaxRetries: -1})
	d.conns = append(d.conns, single)
	d.race(ctx, single)
	d.naive(ctx, single)
	d.window(ctx, single)

	fmt.Fprintf(out, "\nThe quorum lock: %d processes x %d workers increment one balance under %q (TTL %v): each takes\n",
		cfg.Processes, cfg.Workers, lockKey, cfg.TTL)
	fmt.Fprintf(out, "the lock on a majority (%d of %d masters) with SET NX PX, reads and writes the balance through a\n", d.clients[0].Quorum(), cfg.Masters)
	fmt.Fprintf(out, "store that checks fencing tokens, and releases.\n")
	d.phase(ctx, "4a. all masters up", nil)
	minority := []int{}
	for i := 1; len(minority) < cfg.Masters-d.clients[0].Quorum(); i += 2 {
		minority = append(minority, i%cfg.Masters)
	}
	d.phase(ctx, fmt.Sprintf("4b. masters %v paused (a minority): Redlock rides it out", minority), minority)
	d.say("why: a majority still answers; the paused masters' late SETs are cleaned up when they wake.")
	d.noQuorum(ctx, minority)
	d.staleHolder(ctx)
	d.cleanup(ctx)

	res := Result{OK: len(d.failures) == 0, Failures: d.failures}
	if res.OK {
		fmt.Fprintln(out, "\nRESULT: PASS - every check held.")
	} else {
		fmt.Fprintf(out, "\nRESULT: FAIL - %d check(s) failed.\n", len(d.failures))
	}
	return res, nil
}

// masterTimeout is how long a lock waits for any one master.
const masterTimeout = time.Second

type demo struct {
	cfg      Config
	out      io.Writer
	ms       *masters
	clients  []*redlock.Client
	conns    []redis.UniversalClient // the go-redis clients, closed after the lock clients
	store    *fencing.MemoryStore
	balance  int
	failures []string
}

// closeClients closes the lock clients (their cleaners with them), then the
// go-redis clients. It may be called more than once.
func (d *demo) closeClients() {
	for _, c := range d.clients {
		_ = c.Close()
	}
	_ = closeClients(d.conns)
	d.conns = nil
}

func (d *demo) check(ok bool, format string, args ...any) {
	mark := "ok  "
	if !ok {
		mark = "FAIL"
		d.failures = append(d.failures, fmt.Sprintf(format, args...))
	}
	fmt.Fprintf(d.out, "   [%s] %s\n", mark, fmt.Sprintf(format, args...))
}

// phase runs every worker's increments with the masters in paused paused.
func (d *demo) phase(ctx context.Context, title string, paused []int) {
	fmt.Fprintf(d.out, "%s\n", title)
	for _, i := range paused {
		d.ms.proxies[i].SetPaused(true)
	}
	var inside, most, done atomic.Int64
	var mu sync.Mutex
	var tokens []fencing.Token
	var errs []error
	start := time.Now()
	var wg sync.WaitGroup
	for p, c := range d.clients {
		for w := range d.cfg.Workers {
			holder := fmt.Sprintf("p%d/w%d", p, w)
			wg.Go(func() {
				for range d.cfg.Increments {
					tok, err := d.increment(ctx, c, holder, &inside, &most)
					mu.Lock()
					if err != nil {
						errs = append(errs, err)
					} else {
						tokens = append(tokens, tok)
						done.Add(1)
					}
					mu.Unlock()
				}
			})
		}
	}
	wg.Wait()
	took := time.Since(start)
	want := int64(d.cfg.Processes * d.cfg.Workers * d.cfg.Increments)
	d.balance += int(want)
	got, _ := d.readBalance(ctx)
	d.check(len(errs) == 0 && done.Load() == want, "%d of %d critical sections completed in %v (%v each)", done.Load(), want, took.Round(time.Millisecond), (took / time.Duration(max(done.Load(), 1))).Round(time.Microsecond))
	for _, err := range errs[:min(len(errs), 3)] {
		fmt.Fprintf(d.out, "         error: %v\n", err)
	}
	d.check(most.Load() == 1, "at most %d holder(s) inside the critical section at once", most.Load())
	d.check(got == d.balance, "balance is %d, expected %d (no lost update)", got, d.balance)
	d.check(strictlyIncreasing(tokens), "fencing tokens of successive holders strictly increase (%s)", span(tokens))
}

// increment is one critical section: lock, read-modify-write through the
// fenced store, release.
func (d *demo) increment(ctx context.Context, c *redlock.Client, holder string, inside, most *atomic.Int64) (fencing.Token, error) {
	lctx, cancel := context.WithTimeout(ctx, 30*time.Second)
	defer cancel()
	lease, err := c.Lock(lctx, lockKey, d.cfg.TTL)
	if err != nil {
		return 0, err
	}
	n := inside.Add(1)
	for m := most.Load(); n > m && !most.CompareAndSwap(m, n); m = most.Load() {
	}
	tok := lease.Token()
	v, err := d.store.Read(lease.Context(), resource, tok, holder)
	if err == nil || errors.Is(err, fencing.ErrNotFound) {
		cur, _ := strconv.Atoi(string(v))
		err = d.store.Write(lease.Context(), resource, tok, holder, []byte(strconv.Itoa(cur+1)))
	}
	inside.Add(-1)
	if rerr := lease.Release(ctx); err == nil {
		err = rerr
	}
	return tok, err
}

func (d *demo) readBalance(ctx context.Context) (int, error) {
	h, err := d.store.Highest(ctx, resource)
	if err != nil {
		return 0, err
	}
	v, err := d.store.Read(ctx, resource, h, "auditor")
	if err != nil {
		// The auditor presents the highest token under another name: it is
		// rejected by design. Read the value through the last holder instead.
		return d.lastValue(ctx)
	}
	return strconv.Atoi(string(v))
}

// lastValue reads the balance with a fresh token from a real lock, as any
// holder would.
func (d *demo) lastValue(ctx context.Context) (int, error) {
	lctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	lease, err := d.clients[0].Lock(lctx, lockKey, d.cfg.TTL)
	if err != nil {
		return 0, err
	}
	defer lease.Release(ctx)
	v, err := d.store.Read(lease.Context(), resource, lease.Token(), "auditor")
	if err != nil {
		return 0, err
	}
	return strconv.Atoi(string(v))
}

// noQuorum pauses one more master so that only a minority answers.
func (d *demo) noQuorum(ctx context.Context, paused []int) {
	extra := 0
	for contains(paused, extra) {
		extra++
	}
	fmt.Fprintf(d.out, "5. master %d paused too: only %d of %d answer\n", extra, d.cfg.Masters-len(paused)-1, d.cfg.Masters)
	d.ms.proxies[extra].SetPaused(true)
	start := time.Now()
	_, err := d.clients[0].TryLock(ctx, lockKey, d.cfg.TTL)
	took := time.Since(start)
	d.say("why: without a majority no holder can be sure it is alone, so the lock refuses rather than guess. It refuses")
	d.say("once the paused masters have had the per-master timeout (%v here) to answer: until then a paused master", masterTimeout)
	d.say("cannot be told from a slow one, and a round decides early only when the answers already settle it.")
	d.check(errors.Is(err, redlock.ErrNoQuorum), "TryLock refused after %v (the per-master timeout: %v): %v", took.Round(time.Millisecond), masterTimeout, d.short(err))
	for _, p := range d.ms.proxies {
		p.SetPaused(false)
	}
	fmt.Fprintln(d.out, "   all masters resumed")
}

// staleHolder shows fencing: a holder pauses past its lease; the keys
// expire; a newer holder writes; the old one wakes up and writes.
func (d *demo) staleHolder(ctx context.Context) {
	fmt.Fprintln(d.out, "6. A holder pauses past its lease (a GC pause, a stopped VM), then writes")
	c := d.clients[0]
	old, err := c.Lock(ctx, lockKey, d.cfg.TTL)
	if err != nil {
		d.check(false, "lock: %v", err)
		return
	}
	d.say("holder A takes the lock (fencing token %d) and pauses before its write.", old.Token())
	// The pause, seen from the masters: their clocks pass the TTL, the keys expire.
	for _, s := range d.ms.servers {
		s.FastForward(d.cfg.TTL)
	}
	cur, err := d.clients[len(d.clients)-1].Lock(ctx, lockKey, d.cfg.TTL)
	if err != nil {
		d.check(false, "lock: %v", err)
		return
	}
	d.say("A's keys expire while it sleeps; holder B takes the lock (token %d) and writes the balance.", cur.Token())
	errNew := d.store.Write(ctx, resource, cur.Token(), "B", []byte(strconv.Itoa(d.balance)))
	errOld := d.store.Write(ctx, resource, old.Token(), "A", []byte("-1"))
	d.say("A wakes up and writes with token %d: the store has seen %d.", old.Token(), cur.Token())
	d.say("why: no lock can stop a paused process from writing late; a store that checks tokens can.")
	_ = cur.Release(ctx)
	_ = old.Release(ctx)
	d.check(errNew == nil && cur.Token() > old.Token(), "B's write (token %d) accepted", cur.Token())
	d.check(errors.Is(errOld, fencing.ErrStaleToken), "A's late write (token %d) rejected: %v", old.Token(), d.short(errOld))
	got, _ := d.readBalance(ctx)
	d.check(got == d.balance, "balance is still %d: the stale write changed nothing", got)
}

// cleanup checks that no lock key outlives its TTL. A key may remain before
// that: a release or cleanup that timed out (a paused master, a busy
// machine) leaves its key to expire. So every client and proxy is closed
// first (nothing more reaches a master), the masters finish what reached
// them, and their clocks are driven past the TTL before counting: the check
// then holds whatever the timing, unless a key was written without a TTL,
// or with a longer one.
func (d *demo) cleanup(ctx context.Context) {
	fmt.Fprintln(d.out, "7. After everything: keys left behind")
	now := d.ms.keysLeft(lockKey)
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	d.closeClients()
	drained := d.ms.disconnect(wctx)
	if now > 0 {
		d.say("%d master(s) still hold %q: a release or cleanup that timed out (a paused master, a busy machine)", now, lockKey)
		d.say("leaves its key to expire; the TTL bounds how long.")
	} else {
		d.say("no master holds %q: releases and the cleanup of the paused masters' late SETs removed every key.", lockKey)
	}
	d.ms.advance(d.cfg.TTL)
	d.check(drained && d.ms.keysLeft(lockKey) == 0, "lock key %q on %d masters once its TTL has passed (no lock key outlives its TTL)", lockKey, d.ms.keysLeft(lockKey))
	fence := keys.Bucket(keys.BucketOf(lockKey, redlock.DefaultFenceBuckets))
	q := d.clients[0].Quorum()
	d.check(d.ms.keysLeft(fence) >= q, "fencing counter %q (%q's bucket) kept on %d masters, at least a majority (it never expires)", fence, lockKey, d.ms.keysLeft(fence))
}

func strictlyIncreasing(ts []fencing.Token) bool {
	seen := make(map[fencing.Token]bool, len(ts))
	for _, t := range ts {
		if t == 0 || seen[t] {
			return false
		}
		seen[t] = true
	}
	return true
}

func span(ts []fencing.Token) string {
	if len(ts) == 0 {
		return "none"
	}
	lo, hi := ts[0], ts[0]
	for _, t := range ts {
		lo, hi = min(lo, t), max(hi, t)
	}
	return fmt.Sprintf("%d tokens, %d..%d, all distinct", len(ts), lo, hi)
}

func contains(xs []int, x int) bool {
	for _, v := range xs {
		if v == x {
			return true
		}
	}
	return false
}

// short is an error in one line: a lock error as its kind and the round's
// count, in the words every report of quorumlock uses.
func (d *demo) short(err error) string {
	if err == nil {
		return "<nil>"
	}
	var e *redlock.Error
	if errors.As(err, &e) {
		t := quorum.Tally{Granted: e.Granted, Counted: e.Counted, Needed: e.Quorum, Answered: e.Answered, Masters: d.cfg.Masters}
		return fmt.Sprintf("%v (%s)", e.Kind, t)
	}
	return err.Error()
}
