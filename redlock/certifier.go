package redlock

import (
	"context"
	"errors"
	"fmt"
	"sort"
	"strings"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/internal/probe"
	"github.com/quorumlock/quorumlock/internal/restart"
)

// passTimeout bounds one restart pass (a sync reads every counter of its
// sources; a large keyspace of per-key counters of an earlier version takes
// a few seconds to scan).
const passTimeout = 30 * time.Second

// certifier runs the Client's restart passes, one at a time, in the
// background: each probes every master and applies the restart rules of
// docs/safety.md (internal/restart) to what it found: completing a scratch
// certification (rule SC), certifying a fresh cluster (rule S), and raising
// the counters of a master that lost data once its time quarantine is over
// (rules Q and Y). Votes never wait for it: rule V judges each grant.
type certifier struct {
	mu      sync.Mutex
	running bool
	started time.Time     // when the last pass started
	passes  int           // passes finished
	done    chan struct{} // closed when the running pass ends
}

// kick starts a pass unless one is running or, without now, the last one
// started less than probeInterval/2 ago.
func (cf *certifier) kick(c *Client, now bool) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	t := c.cfg.clock.Now()
	if cf.running || !now && cf.passes > 0 && t.Sub(cf.started) < probeInterval/2 {
		return
	}
	done := make(chan struct{})
	cf.running, cf.started, cf.done = true, t, done
	if !c.spawn(func() {
		c.pass()
		cf.mu.Lock()
		cf.running = false
		cf.passes++
		cf.mu.Unlock()
		close(done)
	}) {
		cf.running = false
		close(done)
	}
}

// running returns the running pass's end, and whether a pass has ever
// finished; nil when none runs.
func (cf *certifier) runningPass() (<-chan struct{}, bool) {
	cf.mu.Lock()
	defer cf.mu.Unlock()
	if !cf.running {
		return nil, cf.passes > 0
	}
	return cf.done, cf.passes > 0
}

// refresh starts a pass when one is due and waits for it on first contact,
// and while fewer than a quorum of masters are known to count: the pass may
// certify them (a fresh cluster is certified at once, rule S). It waits at
// most twice the per-master timeout of a TTL of ttl (the pass's probes take
// at most one), and never past ctx or Close.
func (c *Client) refresh(ctx context.Context, ttl time.Duration) {
	c.certifier.kick(c, false)
	done, finished := c.certifier.runningPass()
	if done == nil || finished && c.knownCounting() >= c.quorum {
		return
	}
	t := c.cfg.clock.NewTimer(2 * c.masterTimeout(ttl))
	defer t.Stop()
	select {
	case <-done:
	case <-t.C():
	case <-ctx.Done():
	case <-c.closing():
	}
}

// knownCounting is how many masters this client last saw counting.
func (c *Client) knownCounting() int {
	n := 0
	for _, m := range c.masters {
		m.mu.Lock()
		if m.health.certified && m.health.err == nil && m.health.dup < 0 {
			n++
		}
		m.mu.Unlock()
	}
	return n
}

// pass is one restart pass.
func (c *Client) pass() {
	defer c.reportQuarantine()
	ctx, cancel := context.WithTimeout(c.bgCtx, passTimeout)
	defer cancel()
	infos := c.probeAll(ctx)
	c.complete(ctx, infos)
	if c.scratch(ctx, infos) {
		infos = c.probeAll(ctx)
	}
	c.syncAll(ctx, infos)
}

// probed is one master's probe in a pass: its answer, or why none.
type probed struct {
	info probe.Info
	err  error
}

// probeAll probes every master in parallel, each for at most the per-master
// timeout, and folds each answer into its health.
func (c *Client) probeAll(ctx context.Context) []probed {
	out := make([]probed, len(c.masters))
	var wg sync.WaitGroup
	for i, m := range c.masters {
		wg.Add(1)
		if !c.spawn(func() { defer wg.Done(); out[i] = c.probeMaster(ctx, m) }) {
			wg.Done()
			out[i].err = ErrClosed
		}
	}
	wg.Wait()
	return out
}

// probeMaster asks m for its identity, persistence, replication role and
// records (internal/probe), within the per-master timeout, and notes the
// answer.
func (c *Client) probeMaster(ctx context.Context, m *master) probed {
	pctx, cancel := context.WithTimeout(ctx, c.masterTimeout(c.lambda()))
	defer cancel()
	res := make(chan probed, 1)
	if !c.spawn(func() { // the caller's client may ignore ctx: never wait past it
		info, err := probe.Master(pctx, m.rdb)
		res <- probed{info, err}
	}) {
		return probed{err: ErrClosed}
	}
	var p probed
	select {
	case p = <-res:
	case <-pctx.Done():
		p.err = pctx.Err()
	}
	m.mu.Lock()
	h := &m.health
	if p.err != nil {
		h.err = p.err
		m.mu.Unlock()
		c.cfg.logger.Debug("redlock: probe failed", "master", m.addr, "err", p.err)
		return p
	}
	prev := h.info
	h.info, h.probed, h.err = p.info, true, nil
	if lost := prev.Cert != "" && p.info.Cert == "" || prev.Scratch != "" && p.info.Scratch == ""; lost {
		h.since = time.Time{} // a record is gone: a new loss, dated from now
	}
	m.mu.Unlock()
	m.setDELEX(p.info.DELEX)
	c.noteReplID(m.index, p.info.ReplID, p.info.Role)
	c.observeCertified(m, p.info.Certified(), p.info.Lineage())
	return p
}

func (c *Client) member(i int) restart.Member { return restart.Member{Index: i, RDB: c.masters[i].rdb} }

// complete applies rule SC: a master whose scratch guard names its lineage,
// and without a certificate, is certified when some member of its scratch
// already carries a certificate of the scratch's origin.
func (c *Client) complete(ctx context.Context, infos []probed) {
	origins := map[string]bool{}
	for _, p := range infos {
		if cert, ok := probe.ParseCert(p.info.Cert); p.err == nil && ok {
			origins[cert.Origin] = true
		}
	}
	for i, p := range infos {
		g, ok := probe.ParseScratch(p.info.Scratch)
		if p.err != nil || !ok || p.info.Certified() || g.Lineage != p.info.Lineage() || !origins[g.Origin()] {
			continue
		}
		if err := restart.Complete(ctx, c.member(i), g); err != nil {
			c.cfg.logger.Warn("redlock: could not complete a scratch certification", "master", c.masters[i].addr, "err", err)
			continue
		}
		c.observeCertified(c.masters[i], true, p.info.Lineage())
		c.cfg.logger.Info("redlock: master certified (a scratch certification completed)", "master", c.masters[i].addr)
	}
}

// scratch applies rule S: when at least ⌈(M+q)/2⌉ masters carry no record at
// all and none carries a certificate, they are certified together, at once.
// It reports whether it certified any.
func (c *Client) scratch(ctx context.Context, infos []probed) bool {
	var members, others []restart.Member
	for i, p := range infos {
		switch {
		case p.err != nil:
		case p.info.Cert != "":
			return false // a certified cluster, or one that lost more than the fault model allows
		case p.info.RecordFree() && p.info.Role == "master":
			members = append(members, c.member(i))
		default:
			others = append(others, c.member(i))
		}
	}
	need := restart.ScratchSize(len(c.masters), c.quorum)
	if len(members) < need {
		for _, mb := range members {
			c.block(mb.Index, fmt.Sprintf("a fresh cluster is certified once %d of the %d masters answer with no quorumlock record; %d do now", need, len(c.masters), len(members)))
		}
		return false
	}
	done, err := restart.Scratch(ctx, members, others, len(c.masters), c.quorum, c.cfg.buckets)
	for _, i := range done {
		m := c.masters[i]
		m.mu.Lock()
		l := m.health.info.Lineage()
		m.mu.Unlock()
		c.observeCertified(m, true, l)
	}
	if err != nil {
		c.cfg.logger.Warn("redlock: could not certify a fresh cluster", "err", err)
		for _, mb := range members {
			c.block(mb.Index, "certifying the fresh cluster failed: "+err.Error())
		}
	} else {
		c.cfg.logger.Info("redlock: fresh cluster certified", "masters", len(done))
	}
	return len(done) > 0
}

// block records why master i's certification cannot go on.
func (c *Client) block(i int, why string) {
	m := c.masters[i]
	m.mu.Lock()
	m.health.blocked = why
	m.mu.Unlock()
}

// syncAll applies rules Q and Y to every uncertified master whose time
// quarantine is over: its counters are raised from M − q + 1 certified
// masters, or from every other master when all answer, and it is certified.
// No sync runs while as many masters as a quorum look damaged at once: more
// than the fault model allows, which only an operator's repair can answer.
func (c *Client) syncAll(ctx context.Context, infos []probed) {
	var uncertified, certified, answering []int
	damaged := 0
	for i, p := range infos {
		if p.err != nil || p.info.Role != "master" {
			continue
		}
		answering = append(answering, i)
		if p.info.Certified() {
			certified = append(certified, i)
			continue
		}
		uncertified = append(uncertified, i)
		if p.info.OldEpoch == "" && p.info.Scratch == "" {
			damaged++ // neither an earlier version's master nor an unfinished scratch
		}
	}
	if damaged >= c.quorum {
		why := fmt.Sprintf("%d of the %d masters lost their data at once, and a majority quorum survives at most %d: only %d keep their data, %d are needed to raise counters from; run redlockctl repair (docs/safety.md)",
			damaged, len(c.masters), c.quorum-1, len(c.masters)-damaged, len(c.masters)-c.quorum+1)
		for _, i := range uncertified {
			c.block(i, why)
		}
		return
	}
	for _, i := range uncertified {
		c.syncOne(ctx, i, certified, answering)
	}
}

// syncOne is rules Q and Y for master i.
func (c *Client) syncOne(ctx context.Context, i int, certified, answering []int) {
	m := c.masters[i]
	now := c.cfg.clock.Now()
	m.mu.Lock()
	since, info := m.health.since, m.health.info
	m.mu.Unlock()
	if since.IsZero() || probe.Uncertified(info) == probe.NotCertified && len(certified) == 0 {
		return // a fresh master of a cluster not certified yet: rule S's
	}
	if now.Before(since.Add(c.lambda())) {
		c.block(i, "")
		return
	}
	src := restart.Sources{Certified: len(c.masters) - c.quorum + 1}
	for _, j := range certified {
		if j != i {
			src.Masters = append(src.Masters, c.member(j))
		}
	}
	if len(src.Masters) < src.Certified {
		if len(answering) < len(c.masters) {
			c.block(i, fmt.Sprintf("only %d other masters are certified (%d needed), and %s: its counters cannot be raised from every master either",
				len(src.Masters), src.Certified, missing(c, answering)))
			return
		}
		src = restart.Sources{}
		for _, j := range answering {
			if j != i {
				src.Masters = append(src.Masters, c.member(j))
			}
		}
	}
	ready := func(lambda time.Duration) error {
		if until := since.Add(max(c.lambda(), lambda)); c.cfg.clock.Now().Before(until) {
			return fmt.Errorf("a lease of %v may still be live: waits until %s", lambda, until.Format("15:04:05"))
		}
		return nil
	}
	cert, err := restart.Sync(ctx, c.member(i), src, c.cfg.buckets, ready)
	if err != nil {
		c.block(i, "raising its counters: "+err.Error())
		if !errors.Is(err, restart.ErrRefused) {
			c.cfg.logger.Debug("redlock: counter sync did not finish", "master", m.addr, "err", err)
		}
		return
	}
	c.cfg.logger.Info("redlock: master certified after its counters were raised", "master", m.addr)
	if parsed, ok := probe.ParseCert(cert); ok {
		c.observeCertified(m, true, parsed.Lineage)
	}
}

// missing names the masters not in answering.
func missing(c *Client, answering []int) string {
	in := map[int]bool{}
	for _, i := range answering {
		in[i] = true
	}
	var out []string
	for i := range c.masters {
		if !in[i] {
			out = append(out, fmt.Sprint(i))
		}
	}
	sort.Strings(out)
	verb := "does"
	if len(out) > 1 {
		verb = "do"
	}
	return fmt.Sprintf("master %s %s not answer", strings.Join(out, ", "), verb)
}

// reportQuarantine tells the Observer which reachable masters started or
// stopped counting by themselves since it was last told (a master's first
// verdict is news when it does not count). Called after every pass.
func (c *Client) reportQuarantine() {
	if !c.cfg.quarantine {
		return
	}
	now := c.cfg.clock.Now()
	lambda := c.lambda()
	certified := c.knownCounting() > 0
	for _, m := range c.masters {
		m.mu.Lock()
		v := m.health.verdict(now, lambda, c.masters, certified)
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
