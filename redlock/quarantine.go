package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/hashicorp/go-multierror"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// probeInterval is how often a master's run_id and uptime are looked at
// again while the client is in use (a restart with appendfsync everysec keeps
// the epoch marker, so only its run_id tells).
const probeInterval = time.Second

// health is what a Client knows of one master's restarts. A master votes
// only when it has been probed, is out of quarantine, and its fencing
// counters are known to be complete.
type health struct {
	probed    bool
	probing   bool
	lastProbe time.Time
	runID     string
	epoch     string    // the epoch marker trusted; "" until adopted or synced
	until     time.Time // no vote before this
	reason    string
	needSync  bool // counters must be raised from the others first
	syncing   bool
}

// MasterHealth is one master as the Client sees it (see Client.Health).
type MasterHealth struct {
	Master      int
	Addr        string
	Probed      bool
	RunID       string
	Quarantined bool
	Until       time.Time // end of quarantine, when quarantined by time
	Reason      string    // why it does not vote, "" when it does
}

// Health reports, per master, whether it votes and why not, as of the
// client's last operation (operations re-probe masters every second and
// start a rejoining master's counter sync). Without quarantine
// (WithoutQuarantine) every master votes.
func (c *Client) Health() []MasterHealth {
	now := c.cfg.clock.Now()
	out := make([]MasterHealth, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		h := m.health
		m.mu.Unlock()
		mh := MasterHealth{Master: i, Addr: m.addr, Probed: h.probed, RunID: h.runID}
		if c.cfg.quarantine {
			mh.Reason = h.voteBlocker(now)
			mh.Quarantined = mh.Reason != ""
			if now.Before(h.until) {
				mh.Until = h.until
			}
		}
		out[i] = mh
	}
	return out
}

// voteBlocker says why the master does not vote now, "" when it does.
func (h *health) voteBlocker(now time.Time) string {
	switch {
	case !h.probed:
		return "not probed yet"
	case now.Before(h.until):
		return h.reason
	case h.needSync:
		return "raising its fencing counters from the other masters"
	}
	return ""
}

func (c *Client) longest() time.Duration {
	return max(time.Duration(c.longestTTL.Load()), c.cfg.quarantineMin)
}

// voters returns the masters whose votes count now, and an ErrQuarantined
// error for each master left out. The first call probes every master; later
// calls re-probe in the background every probeInterval.
func (c *Client) voters(ctx context.Context) ([]int, *multierror.Error) {
	if !c.cfg.quarantine {
		return c.allMasters(), nil
	}
	c.refresh(ctx)
	now := c.cfg.clock.Now()
	var idx []int
	var errs *multierror.Error
	for i, m := range c.masters {
		m.mu.Lock()
		blocker := m.health.voteBlocker(now)
		m.mu.Unlock()
		if blocker == "" {
			idx = append(idx, i)
		} else {
			errs = multierror.Append(errs, m.errorf(fmt.Errorf("%w: %s", ErrQuarantined, blocker)))
		}
	}
	return idx, errs
}

// refresh re-probes, in parallel and before the vote, every master whose
// last probe is older than probeInterval (each probe waits at most the
// per-master timeout), and starts the counter sync of every master that
// needs one and is out of its time quarantine. It waits for syncs it started at most the per-master timeout:
// a fresh cluster's bootstrap or a rejoining master's sync then usually
// lets this very attempt count the master.
func (c *Client) refresh(ctx context.Context) {
	now := c.cfg.clock.Now()
	var stale []int
	for i, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		if !h.probing && (!h.probed || now.Sub(h.lastProbe) >= probeInterval) {
			h.probing, stale = true, append(stale, i)
		}
		m.mu.Unlock()
	}
	var wg sync.WaitGroup
	for _, i := range stale {
		wg.Go(func() { c.probeMaster(ctx, i) })
	}
	wg.Wait()

	var syncs []chan struct{}
	now = c.cfg.clock.Now()
	for i, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		// The sync reads the others only after the time quarantine, as the
		// proof in docs/fencing.md (R4) assumes.
		if h.probed && h.needSync && !h.syncing && !now.Before(h.until) {
			done := make(chan struct{})
			if h.syncing = c.goBackground(func() { defer close(done); c.syncCounters(c.bgCtx, i) }); h.syncing {
				syncs = append(syncs, done)
			}
		}
		m.mu.Unlock()
	}
	if len(syncs) == 0 {
		return
	}
	t := c.cfg.clock.NewTimer(c.masterTimeout(c.longest()))
	defer t.Stop()
	for _, done := range syncs {
		select {
		case <-done:
		case <-t.C():
			return
		case <-ctx.Done():
			return
		}
	}
}

// probeMaster asks master i for its run_id, uptime, persistence and epoch
// marker, and applies the quarantine rule (probe.Quarantine).
func (c *Client) probeMaster(ctx context.Context, i int) {
	m := c.masters[i]
	ctx, cancel := context.WithTimeout(ctx, c.masterTimeout(c.longest()))
	defer cancel()
	type result struct {
		info probe.Info
		err  error
	}
	res := make(chan result, 1)
	go func() { // the caller's client may ignore ctx: never wait past it
		info, err := probe.Master(ctx, m.rdb, EpochKey)
		res <- result{info, err}
	}()
	var r result
	select {
	case r = <-res:
	case <-ctx.Done():
		r.err = ctx.Err()
	}
	now := c.cfg.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health
	h.probing = false
	h.lastProbe = now
	if r.err != nil {
		c.cfg.logger.Debug("redlock: probe failed", "master", m.addr, "err", r.err)
		return
	}
	wait, reason := probe.Quarantine(r.info, h.runID, h.epoch, c.longest())
	if wait > 0 && now.Add(wait).After(h.until) {
		h.until, h.reason = now.Add(wait), reason
		c.cfg.logger.Info("redlock: master quarantined", "master", m.addr, "reason", reason, "for", wait)
	}
	m.setDELEX(r.info.DELEX)
	restarted := h.runID != "" && h.runID != r.info.RunID
	switch {
	case r.info.Epoch == "":
		h.needSync, h.epoch = true, "" // never used by quorumlock, or lost its data
	case restarted && !r.info.Durable():
		// It kept its marker but may have come back from an older state (an
		// RDB snapshot, the last second of appendfsync everysec): raise its
		// counters again before it votes.
		h.needSync, h.epoch = true, r.info.Epoch
	case r.info.Epoch != h.epoch:
		// A marker is only ever set once the master's counters were raised
		// (or on a fresh cluster, see bootstrap): adopt a marker new to us. A
		// marker other than the trusted one means the master lost its data and
		// was synced by another client since; probe.Quarantine made it wait the
		// longest TTL.
		h.needSync, h.epoch = false, r.info.Epoch
	}
	h.runID, h.probed = r.info.RunID, true
}

// acceptEpoch checks the epoch marker a master sent with its vote: a marker
// other than the one trusted means the master lost its data since (a restart
// without persistence, a FLUSHALL). Its vote is refused and it is
// quarantined for the longest TTL; its counters are raised before it votes
// again.
func (c *Client) acceptEpoch(i int, epoch string) bool {
	if !c.cfg.quarantine {
		return true
	}
	m := c.masters[i]
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health
	if h.epoch != "" && epoch == h.epoch {
		return true
	}
	until := c.cfg.clock.Now().Add(c.longest())
	if until.After(h.until) {
		h.until = until
		h.reason = fmt.Sprintf("lost its data (epoch marker changed); waits the longest TTL %v", c.longest())
	}
	if epoch == "" {
		h.needSync, h.epoch = true, "" // its counters must be raised before it votes
	} else {
		h.needSync, h.epoch = false, epoch // another client already raised them
	}
	c.cfg.logger.Warn("redlock: master lost its data; quarantined", "master", m.addr, "for", c.longest())
	return false
}

// syncCounters raises master i's fencing counters to the highest value found
// on enough of the other masters that every write-back majority is among
// them (M − quorum + 1 of them), then sets its epoch marker. Only then does
// the master vote again.
func (c *Client) syncCounters(ctx context.Context, i int) {
	m := c.masters[i]
	ctx, cancel := context.WithTimeout(ctx, max(10*time.Second, c.longest()))
	defer cancel()
	epoch, err := c.sync(ctx, i)
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health
	h.syncing = false
	if err != nil {
		c.cfg.logger.Warn("redlock: could not raise a rejoining master's counters", "master", m.addr, "err", err)
		return
	}
	h.needSync, h.epoch = false, epoch
}

// sync raises master i's counters and then sets its epoch marker, guarded:
// a key set before the raise must still be there when the marker is set,
// or the master restarted meanwhile and lost what was raised.
func (c *Client) sync(ctx context.Context, i int) (string, error) {
	rdb := c.masters[i].rdb
	guard := SyncPrefix + newValue()
	if err := rdb.Set(ctx, guard, "1", 10*time.Minute).Err(); err != nil {
		return "", err
	}
	if err := c.raiseFromOthers(ctx, i); err != nil {
		_ = rdb.Del(ctx, guard).Err()
		return "", err
	}
	epoch, err := finishSyncScript.Run(ctx, rdb, []string{guard, EpochKey}, newValue()).Text()
	if errors.Is(err, redis.Nil) {
		return "", errors.New("the master restarted while its counters were raised")
	}
	return epoch, err
}

// raiseFromOthers raises master i's counters from the other masters whose
// counters are complete (probed, not waiting for a sync of their own) and
// whose epoch marker is still the one trusted before and after their
// counters are read. A master that lost its data and has not
// been synced yet would hide the tokens it forgot.
func (c *Client) raiseFromOthers(ctx context.Context, i int) error {
	need := len(c.masters) - c.quorum + 1
	if len(c.masters) == 1 {
		return nil // nothing to learn from; a single master without persistence forgets its counters
	}
	type counters struct {
		vals map[string]fencing.Token
		err  error
	}
	res := make(chan counters, len(c.masters)-1)
	asked := 0
	for j, o := range c.masters {
		if j == i {
			continue
		}
		// Complete counters are what matters here, not the time quarantine,
		// which is about lock keys.
		o.mu.Lock()
		epoch, ok := o.health.epoch, o.health.probed && !o.health.needSync
		o.mu.Unlock()
		if !ok || epoch == "" {
			continue
		}
		asked++
		go func() {
			vals, err := readCounters(ctx, o.rdb, epoch)
			if err != nil {
				err = o.errorf(err)
			}
			res <- counters{vals, err}
		}()
	}
	if asked < need {
		return c.bootstrap(ctx, asked, need)
	}
	highest := make(map[string]fencing.Token)
	var errs *multierror.Error
	got := 0
	for range asked {
		r := <-res
		if r.err != nil {
			errs = multierror.Append(errs, r.err)
			continue
		}
		got++
		for k, v := range r.vals {
			highest[k] = max(highest[k], v)
		}
		if got >= need {
			break
		}
	}
	if got < need {
		return fmt.Errorf("counters from %d of the %d other masters needed: %w", got, need, errs.ErrorOrNil())
	}
	return raiseCounters(ctx, c.masters[i].rdb, highest)
}

// bootstrap handles a cluster that no quorumlock client with quarantine has
// used yet: no master carries an epoch marker, so no token was ever written
// back and there are no counters to raise. It then marks every master at
// once, so that they all count as complete together (marking them one by one
// would leave each waiting for complete peers that never come). Every master
// must answer: one that does not might carry a marker, and then the others
// lost their data rather than never having any.
func (c *Client) bootstrap(ctx context.Context, complete, need int) error {
	notFresh := fmt.Errorf("only %d other masters have complete counters; %d needed", complete, need)
	for _, m := range c.masters {
		v, err := m.rdb.Get(ctx, EpochKey).Result()
		switch {
		case errors.Is(err, redis.Nil):
		case err != nil:
			return fmt.Errorf("%w (and master %s, unreachable, may carry an epoch marker)", notFresh, m.addr)
		case v != "":
			return notFresh
		}
	}
	for _, m := range c.masters {
		if err := m.rdb.SetNX(ctx, EpochKey, newValue(), 0).Err(); err != nil {
			return err
		}
	}
	// Every master is complete now: trust the markers at once rather than at
	// the next probe, so that the first lock need not wait for it.
	for _, m := range c.masters {
		v, err := m.rdb.Get(ctx, EpochKey).Result()
		if err != nil {
			continue
		}
		m.mu.Lock()
		if m.health.probed && m.health.epoch == "" {
			m.health.epoch, m.health.needSync = v, false
		}
		m.mu.Unlock()
	}
	c.cfg.logger.Info("redlock: fresh cluster: epoch markers set on every master")
	return nil
}

// readCounters reads every fencing counter on a master, checking that its
// epoch marker is epoch before and after: otherwise the master lost its data
// meanwhile and its counters prove nothing.
func readCounters(ctx context.Context, rdb redis.UniversalClient, epoch string) (map[string]fencing.Token, error) {
	sameEpoch := func() error {
		v, err := rdb.Get(ctx, EpochKey).Result()
		if err != nil && !errors.Is(err, redis.Nil) {
			return err
		}
		if v != epoch {
			return errors.New("lost its data while its counters were read")
		}
		return nil
	}
	if err := sameEpoch(); err != nil {
		return nil, err
	}
	out := make(map[string]fencing.Token)
	iter := rdb.Scan(ctx, 0, FencePrefix+"*", 1000).Iterator()
	var keys []string
	flush := func() error {
		if len(keys) == 0 {
			return nil
		}
		vals, err := rdb.MGet(ctx, keys...).Result()
		if err != nil {
			return err
		}
		for n, v := range vals {
			s, ok := v.(string)
			if !ok {
				continue // deleted between SCAN and MGET (counters never are) or not a string
			}
			t, err := parseCounter(s)
			if err != nil {
				return fmt.Errorf("%s: %w", keys[n], err)
			}
			out[keys[n]] = t
		}
		keys = keys[:0]
		return nil
	}
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 500 {
			if err := flush(); err != nil {
				return nil, err
			}
		}
	}
	if err := iter.Err(); err != nil {
		return nil, err
	}
	if err := flush(); err != nil {
		return nil, err
	}
	return out, sameEpoch()
}

// raiseCounters raises each counter on rdb to at least its value (never lowers).
func raiseCounters(ctx context.Context, rdb redis.UniversalClient, vals map[string]fencing.Token) error {
	pipe := rdb.Pipeline()
	n := 0
	for k, v := range vals {
		raiseScript.Eval(ctx, pipe, []string{k}, v.String()) // EVAL: a pipeline cannot fall back from EVALSHA
		if n++; n%500 == 0 {
			if _, err := pipe.Exec(ctx); err != nil {
				return err
			}
		}
	}
	if n%500 != 0 {
		_, err := pipe.Exec(ctx)
		return err
	}
	return nil
}
