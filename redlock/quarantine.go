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

// probeInterval is how old, counted from when it was sent, a master's last
// answered probe may be for the master to count by itself: its run_id,
// uptime and markers are looked at again while the client is in use (a
// restart with appendfsync everysec keeps the epoch marker, so only its
// run_id tells). Probes run in the background every probeInterval/2, so in
// steady use no state gets that old and no attempt waits for a probe.
const probeInterval = time.Second

// probeKeys are the quorumlock keys every probe reads.
var probeKeys = probe.Keys{Epoch: EpochKey, Synced: SyncedKey}

// health is what a Client knows of one master's restarts (guarded by the
// master's mu). The rule itself is probe.State's.
type health struct {
	state   probe.State
	probing bool      // a probe is in flight
	sentAt  time.Time // when the probe in flight, or else the last one, was sent; zero: probe at the next operation
	// answeredSent is when the last probe that answered was sent (zero:
	// none did): the conservative age of what state says.
	answeredSent time.Time
	syncing      bool
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
// of the client's last answered probe. Operations re-probe masters in the
// background every half second; a master whose last answered probe was sent
// more than a second ago does not count by itself (ErrStaleProbe) until a
// newer probe answers, so an idle client's masters show as stale until its
// next operation. Health itself probes nothing. Reasons count down from the
// moment of the call. Without quarantine (WithoutQuarantine) every master
// votes.
func (c *Client) Health() []MasterHealth {
	now := c.cfg.clock.Now()
	longest := c.longest()
	out := make([]MasterHealth, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		st := m.health.state
		v, stale := standing(&m.health, now, longest)
		var staleErr error
		if stale {
			staleErr = staleError(&m.health, now)
		}
		m.mu.Unlock()
		mh := MasterHealth{Master: i, Addr: m.addr, Probed: st.Probed, RunID: st.RunID}
		if c.cfg.quarantine {
			switch {
			case !v.Votes():
				mh.Quarantined, mh.Until, mh.Reason = true, v.Until, v.String()
				mh.Err = v.Err()
			case stale:
				mh.Quarantined, mh.Reason, mh.Err = true, staleErr.Error(), staleErr
			}
		}
		out[i] = mh
	}
	return out
}

// standing is where master h stands at now: its verdict, and whether a
// master whose verdict lets it vote may not count by itself because its
// last answered probe was sent more than probeInterval ago (stale). The
// caller holds the master's mu.
func standing(h *health, now time.Time, longest time.Duration) (v probe.Verdict, stale bool) {
	v = h.state.Verdict(now, longest)
	return v, v.Votes() && now.Sub(h.answeredSent) > probeInterval
}

// staleError says why a stale master (see standing) does not count by
// itself. The caller holds the master's mu.
func staleError(h *health, now time.Time) error {
	next := "no probe of it is in flight"
	if h.probing {
		next = fmt.Sprintf("the next, sent %s ago, has not answered yet", now.Sub(h.sentAt).Round(time.Millisecond))
	}
	return fmt.Errorf("%w: sent %s ago, more than %s, and %s; it counts only in a round every master grants",
		ErrStaleProbe, now.Sub(h.answeredSent).Round(time.Millisecond), probeInterval, next)
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

// electorate probes masters as needed (refresh) and says who takes part:
// every master that answered its last probe is asked (a quarantined master's
// yes counts in a round that every master granted, see decide); only masters
// out of quarantine whose last answered probe was sent at most probeInterval
// ago count by themselves. A master whose verdict lets it vote but whose
// probe is older (stalled, or slow to answer) is asked like a quarantined
// one, with an error matching ErrStaleProbe.
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
		v, stale := standing(&m.health, now, longest)
		err := v.Err()
		if stale {
			err = staleError(&m.health, now)
		}
		m.mu.Unlock()
		switch {
		case err == nil:
			e.send, e.votes[i] = append(e.send, i), true
			e.mayVote++
			continue
		case stale: // asked: its yes counts in a round every master grants
			e.send = append(e.send, i)
		case v.Kind == probe.Unreachable, v.Kind == probe.NotProbed, v.Kind == probe.Replica:
		default:
			e.send = append(e.send, i)
		}
		e.errs = append(e.errs, m.errorf(err))
	}
	return e
}

// refresh starts, in the background, a probe of every master that has none
// in flight and whose last probe was sent probeInterval/2 ago or more, failed,
// or never happened (startProbes). It waits only for the probes the vote
// needs (awaitProbes): a first contact's, and, while fewer than a quorum of
// masters count by themselves, those whose answer would let their master
// count; never for a stalled master's once a quorum is known good. Each
// probe lasts at most the per-master timeout. It then bootstraps a fresh
// cluster, and starts the counter sync of every master that needs one and
// is out of its time quarantine, waiting for those at most the per-master
// timeout.
func (c *Client) refresh(ctx context.Context) {
	defer c.reportQuarantine()
	c.startProbes()
	c.awaitProbes(ctx)
	c.bootstrapIfFresh(ctx)

	var syncs []chan struct{}
	now := c.cfg.clock.Now()
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

// startProbes starts, in the background and without waiting for them, a
// probe of every master that has none in flight and is due: never probed,
// its last probe failed, or sent probeInterval/2 ago or more. The send time
// recorded is taken before the probe leaves, which errs on the safe side.
func (c *Client) startProbes() {
	now := c.cfg.clock.Now()
	for i, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		due := !h.probing && (!h.state.Probed || h.state.Err != nil || now.Sub(h.sentAt) >= probeInterval/2)
		if due {
			h.probing, h.sentAt = true, now
		}
		m.mu.Unlock()
		if due && !c.spawn(func() { c.probeMaster(i, now) }) {
			m.mu.Lock()
			h.probing = false
			m.mu.Unlock()
		}
	}
}

// awaitProbes waits, until ctx ends or the client closes, while probesNeeded
// says the vote needs a probe in flight. In steady use it returns at the
// first look, without touching the Client-wide probeEnds.
func (c *Client) awaitProbes(ctx context.Context) {
	for c.probesNeeded(c.cfg.clock.Now()) {
		ended := c.probeEnds.next() // then look again, so that no probe's end is missed
		if !c.probesNeeded(c.cfg.clock.Now()) {
			return
		}
		select {
		case <-ended:
		case <-ctx.Done():
			return
		case <-c.closing():
			return
		}
	}
}

// probesNeeded reports whether the vote should wait for a probe in flight:
// a master's first (a client counts a master only once it knows it: first
// contact blocks), or, while fewer than a quorum of masters count by
// themselves, one whose answer would let its master count (its verdict lets
// it vote, it is stale, and the probe was sent at most probeInterval ago: an
// older one, such as a stalled master's, would answer too old to count).
// Masters whose last probe failed are probed in the background and never
// waited for.
func (c *Client) probesNeeded(now time.Time) bool {
	longest := c.longest()
	counting, helpful := 0, false
	for _, m := range c.masters {
		m.mu.Lock()
		h := &m.health
		v, stale := standing(h, now, longest)
		inFlight := h.probing && h.state.Err == nil
		first := inFlight && !h.state.Probed
		switch {
		case v.Votes() && !stale:
			counting++
		case stale && inFlight && now.Sub(h.sentAt) <= probeInterval:
			helpful = true
		}
		m.mu.Unlock()
		if first {
			return true
		}
	}
	return helpful && counting < c.quorum
}

// probeEnds lets attempts wait for the end of any probe.
type probeEnds struct {
	mu sync.Mutex
	ch chan struct{}
}

// next returns a channel closed when the next probe ends.
func (p *probeEnds) next() <-chan struct{} {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch == nil {
		p.ch = make(chan struct{})
	}
	return p.ch
}

// signal wakes every waiter of next.
func (p *probeEnds) signal() {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.ch != nil {
		close(p.ch)
		p.ch = nil
	}
}

// probeMaster asks master i for its run_id, uptime, persistence, replication
// role and markers, and folds the answer into its state (probe.State); sent
// is when the probe was started (startProbes). It runs in the background,
// under the Client's context (not an operation's: an attempt that stops
// waiting must not cancel it), for at most the per-master timeout.
func (c *Client) probeMaster(i int, sent time.Time) {
	m := c.masters[i]
	ctx, cancel := context.WithTimeout(c.bgCtx, c.masterTimeout(c.longest()))
	defer cancel()
	defer c.probeEnds.signal() // after m.mu is released below
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
	h.probing = false
	if r.err != nil {
		h.state = h.state.Failed(r.err)
		c.cfg.logger.Debug("redlock: probe failed", "master", m.addr, "err", r.err)
		return
	}
	before := h.state.Verdict(now, c.longest())
	h.answeredSent = sent
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
	h.sentAt = time.Time{} // probe again at the next operation
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
