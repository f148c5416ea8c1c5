package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/internal/probe"
)

// probeInterval paces the restart passes (certifier.go): while a Client is in
// use, every master is probed again once the last pass started half of it
// ago. Votes never depend on it (rule V judges every grant on its own); it
// bounds how soon Health, the electorate's hints and the time quarantine
// notice a change.
const probeInterval = time.Second

// health is what a Client knows of one master's restart state (guarded by
// the master's mu). No vote is decided from it: rule V decides each grant
// from what the master said in the same step. It says whom to ask, why a
// master does not count, when a master that does not may be synced (rule
// Q), and what Health reports.
type health struct {
	info   probe.Info // the last answered probe
	probed bool       // a probe has answered
	err    error      // the last probe's error; nil when it answered
	// certified is the last word on rule V for this master (a probe or a
	// grant).
	certified bool
	// since is when this client first saw the master uncertified, in the
	// lineage sinceLineage (rule Q dates its quarantine from it); zero while
	// it is certified. A new lineage, or a record gone, starts it again.
	since        time.Time
	sinceLineage probe.Lineage
	// blocked says why its certification cannot go on now ("" when nothing
	// stands in the way but time).
	blocked string
	dup     int    // the master with the same master_replid, or -1
	replID  string // the last master_replid it answered with as a master (a probe, or an INFO after a script)
	// reported is what the Observer was last told: 0 nothing yet, 1 the
	// master counts, 2 it does not.
	reported int
}

// MasterHealth is one master as the Client sees it (see Client.Health).
type MasterHealth struct {
	Master      int
	Addr        string
	Probed      bool
	RunID       string
	Quarantined bool      // it does not count by itself now (unreachable included)
	Until       time.Time // when its time quarantine ends; zero when not by time
	Reason      string    // why it does not count, counting down from the call; "" when it does
	// Err is nil when the master counts, and otherwise wraps the per-master
	// sentinel of its state (ErrUnreachable, ErrNotCertified, ErrDataLost,
	// ErrRestarted, ErrRaisingCounters, ...).
	Err error
}

// Health reports, per master, whether its yes counts by itself now and why
// not, as of the client's last word on it (a probe, or a grant: operations
// probe every master in the background every half second, and every grant
// carries the master's certificate and lineage). Health itself probes
// nothing. Reasons count down from the moment of the call and say what a
// certification waits for. Without quarantine (WithoutQuarantine,
// WithDataLossTolerance) every master counts.
func (c *Client) Health() []MasterHealth {
	now := c.cfg.clock.Now()
	lambda := c.lambda()
	certified := c.knownCounting() > 0
	out := make([]MasterHealth, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		h := m.health
		m.mu.Unlock()
		mh := MasterHealth{Master: i, Addr: m.addr, Probed: h.probed, RunID: h.info.RunID}
		if c.cfg.quarantine {
			if v := h.verdict(now, lambda, c.masters, certified); !v.Votes() {
				mh.Quarantined, mh.Reason, mh.Err = true, v.String(), v.Err()
				if v.TimeQuarantine() {
					mh.Until = v.Until
				}
			}
		}
		out[i] = mh
	}
	return out
}

// verdict is where master h stands at now, with lambda the quarantine
// length; certified says some master is known certified (a master without
// any record then lost its data, rather than being fresh).
func (h *health) verdict(now time.Time, lambda time.Duration, masters []*master, certified bool) probe.Verdict {
	v := probe.Verdict{Now: now}
	switch {
	case h.err != nil && isAnswer(h.err):
		v.Kind, v.Cause = probe.NotProbed, h.err // it answers, but refused the probe
	case h.err != nil:
		v.Kind, v.Cause = probe.Unreachable, h.err
	case !h.probed && !h.certified:
		v.Kind = probe.NotProbed
	case h.dup >= 0:
		v.Kind, v.Detail = probe.Duplicate, fmt.Sprintf("it is master %d (%s) again", h.dup, masters[h.dup].addr)
	case h.info.Role == "slave":
		v.Kind = probe.Replica
	case h.certified:
	default:
		v.Kind, v.Since, v.Detail = probe.Uncertified(h.info), h.since, h.blocked
		if v.Kind == probe.NotCertified && certified {
			v.Kind = probe.DataLost // it lost everything: its peers are certified
		}
		if v.Kind != probe.NotCertified && !h.since.IsZero() {
			v.Until = h.since.Add(lambda)
			if !now.Before(v.Until) {
				v.Kind = probe.RaisingCounters
			}
		}
	}
	return v
}

// observeCertified records rule V's word on master m (from a grant or a
// probe): it counts, or it does not, in lineage l. A master seen uncertified
// dates its quarantine from the first time, and again from a lineage change.
func (c *Client) observeCertified(m *master, certified bool, l probe.Lineage) {
	c.observe(m, certified, l, nil)
}

// observe is observeCertified; seen, when not nil, is what the master said
// of itself in a grant (its certificate, lineage and role), newer than its
// last probe: Health and the errors judge from it.
func (c *Client) observe(m *master, certified bool, l probe.Lineage, seen func(*probe.Info)) {
	now := c.cfg.clock.Now()
	m.mu.Lock()
	defer m.mu.Unlock()
	h := &m.health
	if seen != nil {
		seen(&h.info)
	}
	h.certified = certified
	switch {
	case certified:
		h.since, h.blocked = time.Time{}, ""
	case h.since.IsZero() || l.Known() && h.sinceLineage.Known() && !l.Same(h.sinceLineage):
		h.since, h.sinceLineage = now, l
	case !h.sinceLineage.Known():
		h.sinceLineage = l
	}
}

// counts is rule V for master i's answer: its role is master and the
// certificate it read in the same step names the lineage the INFO after it
// reports, with the incarnation read beside the certificate. Every master
// counts without quarantine. What it finds is noted for the electorate,
// Health and the certifier.
func (c *Client) counts(i int, cert, inc string, s seen) bool {
	if !c.cfg.quarantine {
		return true
	}
	l := s.lineage
	l.Incarnation = inc
	ok := s.err == nil && probe.Counts(cert, l, s.role)
	m := c.masters[i]
	m.mu.Lock()
	known, same := m.health.certified, m.health.info.Lineage().Same(l) && m.health.info.Cert == cert
	m.mu.Unlock()
	if ok != known || !ok && !same {
		if s.err != nil {
			c.observeCertified(m, ok, probe.Lineage{})
		} else {
			c.observe(m, ok, l, func(info *probe.Info) {
				if info.ReplID != l.ReplID {
					info.RunID = "" // another process or mastership: its run_id is the next probe's
				}
				info.ReplID, info.Incarnation, info.Cert, info.Role = l.ReplID, l.Incarnation, cert, s.role
			})
		}
		if !ok {
			c.certifier.kick(c, true) // a change: look at it now
		}
	}
	return ok
}

// whyNotCounted is master i's verdict as an error, for a grant that did not
// count by itself.
func (c *Client) whyNotCounted(i int) error {
	m := c.masters[i]
	m.mu.Lock()
	h := m.health
	m.mu.Unlock()
	v := h.verdict(c.cfg.clock.Now(), c.lambda(), c.masters, c.knownCounting() > 0)
	if v.Votes() {
		// Its probe said it counts; this grant's own certificate did not.
		return fmt.Errorf("%w: its certificate does not name the lineage it answered with", ErrDataLost)
	}
	return v.Err()
}

// lambda is the quarantine length Λ: the longest TTL this client has used,
// WithQuarantine's, or the longest TTL the masters' lambda sets say a live
// lease may have, whichever is longest. It is read at every use, so a longer
// TTL applies from the call that first uses it.
func (c *Client) lambda() time.Duration {
	l := max(time.Duration(c.longestTTL.Load()), c.cfg.quarantineMin)
	for _, m := range c.masters {
		m.mu.Lock()
		l = max(l, m.health.info.Lambda)
		m.mu.Unlock()
	}
	return l
}

// electorate is who takes part in a round 1, as far as this client knows
// before sending: the masters asked, why some are not asked or are not
// expected to count, and whether the round is bound to fail.
type electorate struct {
	send []int
	errs []error
	// bound: fewer than a quorum may count and not every master is asked,
	// so no round can succeed.
	bound bool
	// err, when set, is the attempt's error: two masters are one server.
	err error
}

// electorate starts (or waits for, on first contact) the restart pass
// (refresh) and says who takes part. Every master that answered its last
// probe, or has not been probed yet, is asked: a master that does not count
// by itself still counts in a round that every master granted (decide).
// Masters whose last probe failed, and replicas, are not asked.
func (c *Client) electorate(ctx context.Context, key string, ttl time.Duration) electorate {
	var e electorate
	if !c.cfg.quarantine {
		// No restart rule to apply: every master is asked and counts. Only
		// one server given twice must be refused (noteReplID).
		e.send = c.allMasters()
		e.err = c.duplicated(key)
		return e
	}
	c.refresh(ctx, ttl)
	now := c.cfg.clock.Now()
	lambda := c.lambda()
	certified := c.knownCounting() > 0
	mayCount := 0
	for i, m := range c.masters {
		m.mu.Lock()
		h := m.health
		m.mu.Unlock()
		if h.dup >= 0 {
			e.err = c.duplicated(key)
			return e
		}
		v := h.verdict(now, lambda, c.masters, certified)
		switch v.Kind {
		case probe.Unreachable, probe.Replica:
			e.errs = append(e.errs, m.wrap(v.Err()))
			continue
		case probe.Votes, probe.NotProbed:
			mayCount++
		default:
			e.errs = append(e.errs, m.wrap(v.Err()))
		}
		e.send = append(e.send, i)
	}
	e.bound = c.cfg.quarantine && mayCount < c.quorum && len(e.send) < len(c.masters)
	return e
}

// noteReplID records the master_replid master i answered with, and finds
// masters that are the same server: until every master was seen once with
// distinct ids, rounds ask for the lineage even without quarantine. Only a
// master's id is noted (role is INFO's): a replica shows its master's id,
// and it is not that server (it does not count by itself either).
func (c *Client) noteReplID(i int, replID, role string) {
	if replID == "" || role != "master" {
		return
	}
	m := c.masters[i]
	m.mu.Lock()
	changed := m.health.replID != replID
	m.health.replID = replID
	m.mu.Unlock()
	if changed || !c.identified.Load() {
		c.findDuplicates()
	}
}

// findDuplicates marks masters that are the same server (the same
// master_replid: two masters never share one, see probe.Lineage),
// and sets identified once every master was seen and none is another's.
func (c *Client) findDuplicates() {
	ids := make([]string, len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		ids[i] = m.health.replID
		m.mu.Unlock()
	}
	first := map[string]int{}
	dup := make([]int, len(ids))
	all, none := true, true
	for i, id := range ids {
		dup[i] = -1
		if id == "" {
			all = false
			continue
		}
		if j, ok := first[id]; ok {
			dup[i], dup[j], none = j, i, false
		} else {
			first[id] = i
		}
	}
	for i, m := range c.masters {
		m.mu.Lock()
		if m.health.dup < 0 && dup[i] >= 0 {
			c.cfg.logger.Warn("redlock: two masters are the same server", "master", m.addr, "same as", c.masters[dup[i]].addr)
		}
		m.health.dup = dup[i]
		m.mu.Unlock()
	}
	c.identified.Store(all && none)
}

// duplicated is the error of every attempt of key while two masters are
// known to be the same server, nil otherwise. It names both masters of
// each such pair: neither counts, so both are refusals for good
// (ErrMisconfigured once no majority is left).
func (c *Client) duplicated(key string) error {
	errs := newMasterErrs(len(c.masters))
	for i, m := range c.masters {
		m.mu.Lock()
		j, id := m.health.dup, m.health.replID
		m.mu.Unlock()
		if j >= 0 {
			errs.add(duplicateError(i, j, c.masters, id), duplicateError(j, i, c.masters, id))
		}
	}
	if masters := errs.list(); masters != nil {
		return &Error{Op: "lock", Key: key, Kind: ErrNoQuorum, Quorum: c.quorum, Of: len(c.masters), Masters: masters}
	}
	return nil
}
