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

// probeInterval is how often a master's run_id, uptime and markers are looked
// at again while the client is in use (a restart with appendfsync everysec
// keeps the epoch marker, so only its run_id tells).
const probeInterval = time.Second

// probeKeys are the quorumlock keys every probe reads.
var probeKeys = probe.Keys{Epoch: EpochKey, Synced: SyncedKey}

// health is what a Client knows of one master's restarts (guarded by the
// master's mu). The rule itself is probe.State's.
type health struct {
	state     probe.State
	probing   bool
	lastProbe time.Time
	syncing   bool
	// reported is what the Observer was last told: 0 nothing yet, 1 the
	// master votes, 2 it does not.
	reported int
}

// MasterHealth is one master as the Client sees it (see Client.Health).
type MasterHealth struct {
	Master      int
	Addr        string
	Probed      bool
	RunID       string
	Quarantined bool      // it does not vote now (unreachable included)
	Until       time.Time // when a time quarantine ends; zero when not by time
	Reason      string    // why it does not vote, counting down from the call; "" when it does
	// Err is nil when the master votes, and otherwise wraps the per-master
	// sentinel of its state (ErrUnreachable, ErrYoung, ErrDataLost, ...).
	Err error
}

// Health reports, per master, whether its vote counts now and why not, as
// of the client's last probe (operations re-probe masters every second).
// Reasons count down from the moment of the call. Without quarantine
// (WithoutQuarantine) every master votes.
func (c *Client) Health() []MasterHealth {
	now := c.cfg.clock.Now()
	out := make([]MasterHealth, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		st := m.health.state
		m.mu.Unlock()
		mh := MasterHealth{Master: i, Addr: m.addr, Probed: st.Probed, RunID: st.RunID}
		if c.cfg.quarantine {
			v := st.Verdict(now, c.longest())
			if !v.Votes() {
				mh.Quarantined, mh.Until, mh.Reason = true, v.Until, v.String()
				mh.Err = v.Err()
			}
		}
		out[i] = mh
	}
	return out
}

// longest is the quarantine length: the longest TTL this client has used,
// or WithQuarantine's, whichever is longer. It is read at every vote, so a
// longer TTL applies from the call that first uses it.
func (c *Client) longest() time.Duration {
	return max(time.Duration(c.longestTTL.Load()), c.cfg.quarantineMin)
}

// electorate is who takes part in a round 1: the masters it is sent to, and
// which of them count by themselves (votes).
type electorate struct {
	send    []int
	votes   []bool
	mayVote int
	errs    []error // why the others do not count (quarantine reasons, unreachable)
}

// electorate probes masters as needed and says who takes part: every master
// that answered its last probe is asked (a quarantined master's yes counts in
// a round that every master granted, see decide); only masters out of
// quarantine count by themselves.
func (c *Client) electorate(ctx context.Context) electorate {
	e := electorate{votes: make([]bool, len(c.masters))}
	if !c.cfg.quarantine {
		e.send, e.mayVote = c.allMasters(), len(c.masters)
		for i := range e.votes {
			e.votes[i] = true
		}
		return e
	}
	c.refresh(ctx)
	now := c.cfg.clock.Now()
	longest := c.longest()
	for i, m := range c.masters {
		m.mu.Lock()
		v := m.health.state.Verdict(now, longest)
		m.mu.Unlock()
		switch v.Kind {
		case probe.Votes:
			e.send, e.votes[i] = append(e.send, i), true
			e.mayVote++
			continue
		case probe.Unreachable, probe.NotProbed, probe.Replica:
		default:
			e.send = append(e.send, i)
		}
		e.errs = append(e.errs, m.errorf(v.Err()))
	}
	return e
}

// refresh re-probes, in parallel and before the vote, every master whose
// last probe is older than probeInterval (each probe waits at most the
// per-master timeout; masters whose last probe failed are probed in the
// background and not waited for), bootstraps a fresh cluster, and starts
// the counter sync of every master that needs one and is out of its time
// quarantine, waiting for those at most the per-master timeout.
func (c *Client) refresh(ctx context.Context) {
	now := c.cfg.clock.Now()
	defer c.reportQuarantine()
	var wg sync.WaitGroup
	for i, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		stale := !h.probing && (!h.state.Probed || h.state.Err != nil || now.Sub(h.lastProbe) >= probeInterval)
		failing := h.state.Err != nil
		if stale {
			h.probing = true
		}
		m.mu.Unlock()
		switch {
		case !stale:
		case failing:
			c.spawn(func() { c.probeMaster(c.bgCtx, i) })
		default:
			wg.Add(1)
			if !c.spawn(func() { defer wg.Done(); c.probeMaster(ctx, i) }) {
				wg.Done()
			}
		}
	}
	wg.Wait()
	c.bootstrapIfFresh(ctx)

	var syncs []chan struct{}
	now = c.cfg.clock.Now()
	longest := c.longest()
	for i, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		// The sync reads the others only after the time quarantine, as the
		// proof in docs/fencing.md (R4) assumes.
		if !h.syncing && h.state.Verdict(now, longest).Kind == probe.RaisingCounters {
			done := make(chan struct{})
			if h.syncing = c.spawn(func() { defer close(done); c.syncCounters(c.bgCtx, i) }); h.syncing {
				syncs = append(syncs, done)
			}
		}
		m.mu.Unlock()
	}
	if len(syncs) == 0 {
		return
	}
	t := c.cfg.clock.NewTimer(c.masterTimeout(longest))
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

// probeMaster asks master i for its run_id, uptime, persistence, replication
// role and markers, and folds the answer into its state (probe.State).
func (c *Client) probeMaster(ctx context.Context, i int) {
	m := c.masters[i]
	ctx, cancel := context.WithTimeout(ctx, c.masterTimeout(c.longest()))
	defer cancel()
	type result struct {
		info probe.Info
		err  error
	}
	res := make(chan result, 1)
	if !c.spawn(func() { // the caller's client may ignore ctx: never wait past it
		info, err := probe.Master(ctx, m.rdb, probeKeys)
		res <- result{info, err}
	}) {
		res <- result{err: ErrClosed}
	}
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
	h.probing, h.lastProbe = false, now
	if r.err != nil {
		h.state = h.state.Failed(r.err)
		c.cfg.logger.Debug("redlock: probe failed", "master", m.addr, "err", r.err)
		return
	}
	before := h.state.Verdict(now, c.longest())
	h.state = h.state.Observe(r.info, now)
	m.setDELEX(r.info.DELEX)
	if after := h.state.Verdict(now, c.longest()); !after.Votes() && after.Kind != before.Kind {
		c.cfg.logger.Info("redlock: master does not vote", "master", m.addr, "reason", after.String())
	}
}

// reportQuarantine tells the Observer which reachable masters started or
// stopped counting by themselves since it was last told (a master's first
// verdict is news when it does not vote). Called after every refresh, so a
// time quarantine that ended between two operations is reported at the
// next one.
func (c *Client) reportQuarantine() {
	now := c.cfg.clock.Now()
	longest := c.longest()
	for _, m := range c.masters {
		m.mu.Lock()
		v := m.health.state.Verdict(now, longest)
		news := false
		if v.Kind != probe.Unreachable && v.Kind != probe.NotProbed {
			state := 2
			if v.Votes() {
				state = 1
			}
			news = state != m.health.reported && (m.health.reported != 0 || state == 2)
			m.health.reported = state
		}
		m.mu.Unlock()
		if news {
			c.observeQuarantine(m, v) // outside m.mu: an Observer may call Health
		}
	}
}

// bootstrapIfFresh marks every master of a fresh cluster at once: when every
// master answered its probe and none carries an epoch marker, nobody has
// locked on it with quarantine, so no token was ever written back and there
// are no counters to raise. (Marking them one by one would leave each
// waiting for complete peers that never come.) Every master must answer:
// one that does not might carry a marker, and then the others lost their
// data rather than never having any. The young rule still applies.
func (c *Client) bootstrapIfFresh(ctx context.Context) {
	runIDs := make([]string, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		st := m.health.state
		m.mu.Unlock()
		if !st.Probed || st.Err != nil || st.Epoch != "" {
			return
		}
		runIDs[i] = st.RunID
	}
	ctx, cancel := context.WithTimeout(ctx, c.masterTimeout(c.longest()))
	defer cancel()
	// Read every marker again: a probe may be up to a second old.
	for _, m := range c.masters {
		v, err := m.rdb.Get(ctx, EpochKey).Result()
		if !errors.Is(err, redis.Nil) || v != "" {
			return
		}
	}
	marks := make([]string, len(c.masters))
	for i, m := range c.masters {
		v, err := bootstrapScript.Run(ctx, m.rdb, []string{EpochKey, SyncedKey}, newValue(), runIDs[i]).Text()
		if err != nil {
			c.cfg.logger.Warn("redlock: could not mark a fresh cluster", "master", m.addr, "err", err)
			return
		}
		marks[i] = v
	}
	for i, m := range c.masters {
		m.mu.Lock()
		if m.health.state.RunID == runIDs[i] {
			m.health.state = m.health.state.Bootstrapped(marks[i])
		}
		m.mu.Unlock()
	}
	c.cfg.logger.Info("redlock: fresh cluster: epoch markers set on every master")
}

// acceptEpoch checks the epoch marker a master sent with its grant: a marker
// other than the one trusted means the master lost its data since (a restart
// without persistence, a FLUSHALL). Its grant then does not count as a vote
// by itself, and it is quarantined from now. A master whose marker is not
// trusted yet (it does not vote) is left as it is.
func (c *Client) acceptEpoch(i int, epoch string) bool {
	if !c.cfg.quarantine {
		return true
	}
	m := c.masters[i]
	m.mu.Lock()
	h := &m.health
	switch trusted := h.state.Epoch; {
	case trusted != "" && epoch == trusted:
		m.mu.Unlock()
		return true
	case trusted == "":
		m.mu.Unlock()
		return false
	}
	now := c.cfg.clock.Now()
	h.state = h.state.EpochChanged(now)
	h.lastProbe = time.Time{} // probe again before the next vote
	v := h.state.Verdict(now, c.longest())
	news := h.reported != 2
	h.reported = 2
	m.mu.Unlock()
	if news {
		c.observeQuarantine(m, v)
	}
	c.cfg.logger.Warn("redlock: master lost its data; quarantined", "master", m.addr, "for", c.longest())
	return false
}

// syncCounters raises master i's fencing counters to the highest value found
// on enough of the other masters that every write-back majority is among
// them (M − quorum + 1 of them), then sets its epoch marker and records its
// run_id as complete. Only then does the master vote again.
func (c *Client) syncCounters(ctx context.Context, i int) {
	m := c.masters[i]
	ctx, cancel := context.WithTimeout(ctx, max(10*time.Second, c.longest()))
	defer cancel()
	m.mu.Lock()
	runID := m.health.state.RunID
	m.mu.Unlock()
	epoch, err := c.sync(ctx, i, runID)
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health
	h.syncing = false
	if err != nil {
		c.cfg.logger.Warn("redlock: could not raise a rejoining master's counters", "master", m.addr, "err", err)
		return
	}
	if h.state.RunID == runID {
		h.state = h.state.Synced(epoch)
	}
}

// sync raises master i's counters and then sets its epoch marker and synced
// run_id, guarded: a key set before the raise must still be there when the
// marker is set, or the master restarted meanwhile and lost what was raised.
func (c *Client) sync(ctx context.Context, i int, runID string) (string, error) {
	rdb := c.masters[i].rdb
	guard := SyncPrefix + newValue()
	if err := rdb.Set(ctx, guard, "1", 10*time.Minute).Err(); err != nil {
		return "", err
	}
	if err := c.raiseFromOthers(ctx, i); err != nil {
		_ = rdb.Del(ctx, guard).Err()
		return "", err
	}
	epoch, err := finishSyncScript.Run(ctx, rdb, []string{guard, EpochKey, SyncedKey}, newValue(), runID).Text()
	if errors.Is(err, redis.Nil) {
		return "", errors.New("the master restarted while its counters were raised")
	}
	return epoch, err
}

// raiseFromOthers raises master i's counters from the other masters whose
// counters are complete (they answer, are not waiting for a sync of their
// own, and carry the marker trusted before and after their counters are
// read). A master that lost its data and has not been synced yet would hide
// the tokens it forgot.
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
		o.mu.Lock()
		st := o.health.state
		o.mu.Unlock()
		if !st.Probed || st.Err != nil || st.NeedSync || st.Epoch == "" {
			continue
		}
		asked++
		if !c.spawn(func() {
			vals, err := readCounters(ctx, o.rdb, st.Epoch)
			if err != nil {
				err = o.errorf(err)
			}
			res <- counters{vals, err}
		}) {
			res <- counters{err: ErrClosed}
		}
	}
	if asked < need {
		return fmt.Errorf("only %d other masters have complete counters; %d needed", asked, need)
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
