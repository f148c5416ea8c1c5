package redlock

import (
	"context"
	"fmt"
	"reflect"
	"strings"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/background"
	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/internal/redislog"
)

// Client acquires locks on a majority of independent Redis masters. It is
// safe for concurrent use. Close it when done: Close stops its background
// work (subscriptions, cleanup retries, restart probes).
type Client struct {
	cfg     config
	masters []*master
	quorum  int

	longestTTL atomic.Int64 // nanoseconds; the longest TTL used so far
	certifier  certifier    // the restart passes (certifier.go)
	// identified: without quarantine, every master was probed once, and none
	// is another's duplicate (the only restart-pass work then).
	identified atomic.Bool

	cleaners []*cleaner // one per master
	tokens   *tokenCache
	released *releasedValues
	queues   *fifoQueues
	holders  *localHolders
	handoffs *handoffs
	notifier *notifier
	deletes  *outstanding // releases' deletes on their way: Close sends them first

	bg    *background.Group // every goroutine the Client or its leases start
	bgCtx context.Context   // cancelled by Close: the context of long background work
	stop  context.CancelFunc
}

// New returns a Client over the caller's go-redis clients, one per
// independent master (1 to 9). The clients stay the caller's: Close
// does not close them. go-redis has one logger per process, which prints a
// line on stderr for every failed dial: New routes those of these clients
// to WithLogger's logger (dropped by default) with a hook added once per
// client, and installs a go-redis logger that prints every other client's
// lines as before, once per process (cluster.KeepRedisLogger, called before,
// keeps go-redis's logger as it is). Whatever timeouts they were built with, an operation
// waits for a master at most the per-master timeout (see WithMasterTimeout).
//
// An even number of masters works but buys nothing: 4 masters need 3 votes
// and tolerate 1 failure, like 3 masters do.
//
// New returns an error matching ErrInvalidArgument for zero or too many
// masters, a nil client (also a typed nil such as (*redis.Client)(nil)), the
// same client twice, an unusable option, or a data-loss tolerance the masters
// cannot give (WithDataLossTolerance).
func New(masters []redis.UniversalClient, opts ...Option) (*Client, error) {
	switch {
	case len(masters) == 0:
		return nil, invalid("no masters")
	case len(masters) > quorum.MaxMasters:
		return nil, invalid("%d masters; at most %d are supported", len(masters), quorum.MaxMasters)
	}
	seen := make(map[redis.UniversalClient]int, len(masters))
	for i, m := range masters {
		if isNil(m) {
			return nil, invalid("master %d is a nil client", i)
		}
		if j, dup := seen[m]; dup {
			return nil, invalid("masters %d and %d are the same client", j, i)
		}
		seen[m] = i
	}
	cfg := defaultConfig()
	for _, o := range opts {
		if o == nil {
			return nil, invalid("nil option")
		}
		if err := o(&cfg); err != nil {
			return nil, err
		}
	}
	if err := quorum.Check(len(masters), cfg.tolerance); err != nil {
		return nil, invalid("%v", err)
	}
	if cfg.tolerance > 0 {
		if cfg.quarantineSet {
			return nil, invalid("WithDataLossTolerance(%d) replaces the restart quarantine: drop WithQuarantine/WithoutQuarantine", cfg.tolerance)
		}
		cfg.quarantine = false
	}
	c := &Client{
		cfg:      cfg,
		quorum:   quorum.Size(len(masters), cfg.tolerance),
		tokens:   newTokenCache(),
		released: newReleasedValues(),
		queues:   newFIFOQueues(),
		holders:  newLocalHolders(),
		handoffs: newHandoffs(),
		deletes:  newOutstanding(),
		bg:       background.New(),
	}
	c.bgCtx, c.stop = context.WithCancel(context.Background())
	for _, m := range masters {
		redislog.Route(m, cfg.logger) // go-redis's lines about these clients: to WithLogger, never stderr
	}
	for i, m := range masters {
		ms := newMaster(i, m, cfg.maxInFlight)
		ms.detect = func() { c.spawn(func() { c.detectDELEX(ms) }) }
		ms.batch = newBatcher(c, ms)
		c.masters = append(c.masters, ms)
		c.cleaners = append(c.cleaners, newCleaner(c, ms))
	}
	for _, m := range c.masters {
		m.batch.start()
	}
	c.notifier = newNotifier(c)
	return c, nil
}

// Quorum is the number of masters that must agree: ⌊(M+f)/2⌋+1, with f the
// data-loss tolerance (WithDataLossTolerance; 0 by default: a majority).
func (c *Client) Quorum() int { return c.quorum }

// Masters is the number of masters.
func (c *Client) Masters() int { return len(c.masters) }

// Close stops the client. First it lets the deletes of released leases
// still on their way reach their masters (Release returns at a quorum and
// the slower masters' deletes follow), waiting for their answers up to the
// per-master timeout (WithMasterTimeout; 1 s by default), so that a program
// that releases, closes and exits leaves no key behind. Then it waits for
// every goroutine the client or its leases started: commands still on their
// way to a master (with go-redis clients that ignore context deadlines, up
// to their read timeout), the pipelining
// workers, the pub/sub subscriptions, restart probes and counter syncs,
// background cleanup of failed attempts (abandoned: those keys expire by
// their TTL), auto-extension renewals and lease watchers. Lock waiters
// return ErrClosed. Every lease still held ends: Done closes, and Err and
// context.Cause match ErrClosed; Extend and Release return ErrClosed, and the
// keys expire by their TTL (release leases before Close to free them at
// once). Close does not close the go-redis clients given to
// New. It is safe to call twice.
func (c *Client) Close() error {
	if !c.closed() {
		c.deletes.wait(c.masterTimeout(0))
	}
	if c.bg.Stop() {
		c.stop() // cancels background work that takes long (counter syncs)
		c.notifier.close()
	}
	c.bg.Wait()
	return nil
}

func (c *Client) closed() bool { return c.bg.Stopped() }

// closing is closed by Close: goroutines watch it to end.
func (c *Client) closing() <-chan struct{} { return c.bg.Done() }

// spawn runs f in a goroutine that Close waits for: every goroutine of a
// Client and its leases starts here. After Close it runs nothing and
// reports false.
func (c *Client) spawn(f func()) bool { return c.bg.Go(f) }

// isNil reports whether a client is nil, typed nils included.
func isNil(m redis.UniversalClient) bool {
	if m == nil {
		return true
	}
	v := reflect.ValueOf(m)
	switch v.Kind() {
	case reflect.Pointer, reflect.Map, reflect.Slice, reflect.Func, reflect.Interface, reflect.Chan:
		return v.IsNil()
	}
	return false
}

// masterTimeout is how long one operation waits for one master.
func (c *Client) masterTimeout(ttl time.Duration) time.Duration {
	if c.cfg.masterTimeout > 0 {
		return c.cfg.masterTimeout
	}
	if ttl <= 0 { // background work with no TTL at hand
		return time.Second
	}
	return min(max(ttl/10, 50*time.Millisecond), time.Second)
}

// checkKeyTTL validates the arguments shared by TryLock, Lock and Extend.
func (c *Client) checkKeyTTL(key string, ttl time.Duration) error {
	switch {
	case key == "":
		return invalid("empty key")
	case strings.HasPrefix(key, keys.Prefix):
		return invalid("key %q uses the reserved prefix %q", key, keys.Prefix)
	}
	return c.checkTTL(ttl)
}

func (c *Client) checkTTL(ttl time.Duration) error {
	switch {
	case ttl <= 0:
		return invalid("ttl %v is not positive", ttl)
	case ttl%time.Millisecond != 0:
		return invalid("ttl %v is not a whole number of milliseconds", ttl)
	case c.validity(ttl) <= 0:
		return invalid("ttl %v leaves no validity after the drift allowance %v", ttl, ttl-c.validity(ttl))
	case ttl <= c.masterTimeout(ttl):
		return invalid("ttl %v is not longer than the per-master timeout %v", ttl, c.masterTimeout(ttl))
	}
	return nil
}

// noteTTL records the longest TTL in use (it sizes restart quarantine).
func (c *Client) noteTTL(ttl time.Duration) {
	for {
		cur := c.longestTTL.Load()
		if int64(ttl) <= cur || c.longestTTL.CompareAndSwap(cur, int64(ttl)) {
			return
		}
	}
}

// checkCtx rejects a nil context.
func checkCtx(ctx context.Context) error {
	if ctx == nil {
		return invalid("nil context")
	}
	return nil
}

func (c *Client) allMasters() []int {
	idx := make([]int, len(c.masters))
	for i := range idx {
		idx[i] = i
	}
	return idx
}

func applyLockOptions(opts []LockOption) (lockConfig, error) {
	var lc lockConfig
	for _, o := range opts {
		if o == nil {
			return lc, invalid("nil lock option")
		}
		if err := o(&lc); err != nil {
			return lc, err
		}
	}
	return lc, nil
}

// ctxDone reports why ctx ended (see ctxErr), or nil while it has not.
func ctxDone(ctx context.Context) error {
	select {
	case <-ctx.Done():
		return ctxErr(ctx)
	default:
		return nil
	}
}

// ctxErr is the error of an ended ctx: it always matches ctx.Err()
// (context.Canceled or DeadlineExceeded), and also the cause given to
// WithCancelCause or WithTimeoutCause when there is one.
func ctxErr(ctx context.Context) error {
	err, cause := ctx.Err(), context.Cause(ctx)
	if cause == nil || cause == err {
		return err
	}
	return fmt.Errorf("%w: %w", err, cause)
}

// detectDELEX asks a master whether it has DELEX (COMMAND INFO answers nil
// for an unknown command). Without an answer it stays unknown and the
// script is used; the next Client would ask again.
func (c *Client) detectDELEX(m *master) {
	ctx, cancel := context.WithTimeout(context.Background(), c.masterTimeout(0))
	defer cancel()
	done := make(chan []any, 1)
	if !c.spawn(func() { // the caller's client may ignore ctx
		v, err := m.rdb.Do(ctx, "COMMAND", "INFO", "DELEX").Slice()
		if err != nil {
			v = nil
		}
		done <- v
	}) {
		return
	}
	select {
	case v := <-done:
		if len(v) == 1 {
			m.setDELEX(v[0] != nil)
		}
	case <-ctx.Done():
	}
}
