package redlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// attempt is one acquisition attempt, step by step (run): round 1 (SET NX on
// every master, counted by rule V), the fencing token (the fast path, or the
// write-back round), the validity check, and, when any step fails, cleanup
// and the error. Its fields are what the steps hand each other.
type attempt struct {
	c     *Client
	ctx   context.Context
	key   string
	ttl   time.Duration
	lc    lockConfig
	value string
	start time.Time // before the first send: validity counts from here

	r        *round[grant] // round 1
	votes    []bool        // by master: whose yes counts by itself (rule V)
	raised   []bool        // by master: its counter was raised to the proposal
	proposal fencing.Token
	highest  fencing.Token // the largest counter round 1 read
	cause    error         // the context's error, when it ended a round
	errs     masterErrs    // one error per master, the most telling
	report   attemptReport // for the Observer, and Lock's wait

	// watchSplit asks a failed attempt to close report.split once a master
	// is known to have granted it (Lock's split-vote rule).
	watchSplit bool
}

// attemptReport is what an attempt tells its caller beside the lease or the
// error: the Observer's figures, and Lock's signals for its wait.
type attemptReport struct {
	granted int
	masters []MasterResult
	// waiting is the most clients any refusing master saw subscribed to the
	// key's release channel (0 when none refused): Lock's herd estimate.
	waiting int64
	// split is closed once a master is known to have granted the failed
	// attempt, at the decision or in a later answer its cleanup waits for
	// anyway; nil unless watchSplit was asked; never closed when no master
	// granted.
	split <-chan struct{}
}

// grant is one master's answer to round 1.
type grant struct {
	granted bool
	counter fencing.Token // before any raise
	cert    string        // the master's certificate, read in the same step
	inc     string        // the master's incarnation, read in the same step
	raised  bool          // the counter was raised to the proposal
	// waiting is, when refused, how many clients are subscribed to the key's
	// release channel on that master: the clients waiting for the key; -1
	// when the master would not say (an ACL user without +pubsub|numsub).
	waiting int64
}

// waitingUnknown stands for a refusing master that would not say how many
// clients wait: Lock then assumes a herd.
const waitingUnknown = 1 << 30

// attempt makes one attempt for key (TryLock's, and each of Lock's).
func (c *Client) attempt(ctx context.Context, key string, ttl time.Duration, lc lockConfig, watchSplit bool) (*Lease, attemptReport, error) {
	a := &attempt{c: c, ctx: ctx, key: key, ttl: ttl, lc: lc, watchSplit: watchSplit, errs: newMasterErrs(len(c.masters))}
	l, err := a.run()
	return l, a.report, err
}

func (a *attempt) run() (*Lease, error) {
	c := a.c
	if err := ctxDone(a.ctx); err != nil {
		return nil, a.fail(ErrNotAcquired, err)
	}
	if c.closed() {
		return nil, ErrClosed
	}
	el := c.electorate(a.ctx, a.ttl)
	if el.err != nil {
		return nil, el.err
	}
	a.errs.add(el.errs...)
	if err := ctxDone(a.ctx); err != nil { // it ended while the restart pass was waited for
		return nil, a.fail(ErrNotAcquired, err)
	}
	if el.bound {
		// Bound to fail: send nothing rather than place keys to clean up.
		return nil, a.fail(ErrNoQuorum, nil)
	}
	if err := a.round1(el.send); err != nil {
		return nil, err
	}
	token, err := a.fence()
	if err != nil {
		return nil, err
	}
	validUntil := c.deadline(a.start, a.ttl)
	if now := c.cfg.clock.Now(); !now.Before(validUntil) {
		return nil, a.failed(ErrNotAcquired, fmt.Errorf("no validity left: the attempt took %v of a %v TTL", now.Sub(a.start), a.ttl))
	}
	if c.observing() {
		a.report.granted, a.report.masters = a.r.count(yes), a.r.results(a.errs.list())
	}
	c.cfg.logger.Debug("redlock: acquired", "key", a.key, "token", uint64(token), "validity", validUntil.Sub(c.cfg.clock.Now()))
	return c.newLease(a.key, a.value, a.ttl, token, validUntil, a.r.calls, a.lc), nil
}

// round1 sends the acquire script to send and collects answers until the
// quorum rule decides. A grant counts by itself only where rule V says so;
// a round that every master granted counts them all (decide).
func (a *attempt) round1(send []int) error {
	c := a.c
	a.value = newValue()
	b := keys.BucketOf(a.key, c.cfg.buckets)
	if c.cfg.fencing {
		a.proposal = c.tokens.proposal()
	}
	a.votes = make([]bool, len(c.masters))
	for _, i := range send {
		a.votes[i] = true // until its answer says otherwise
	}
	a.raised = make([]bool, len(c.masters))
	a.start = c.cfg.clock.Now()
	a.r = startRound(a.ctx, c, send, c.masterTimeout(a.ttl), c.sendAcquire(a.key, b, a.value, a.ttl, a.proposal, c.released.value(a.key, a.start)))
	runIDs := make(map[string]int, len(c.masters))
	var dup error
	d, cause := a.r.collect(a.ctx, a.votes, c.quorum, func(i int, rep reply[grant]) (outcome, error) {
		a.highest = max(a.highest, rep.val.counter)
		if rep.seen.err == nil {
			c.noteRunID(i, rep.seen.lineage.RunID)
		}
		if j, twice := runIDs[rep.seen.lineage.RunID]; twice && rep.seen.err == nil {
			dup = duplicateError(j, i, c.masters, rep.seen.lineage.RunID)
			a.votes[i], a.votes[j] = false, false
		} else if rep.seen.err == nil {
			runIDs[rep.seen.lineage.RunID] = i
		}
		counts := c.counts(i, rep.val.cert, rep.val.inc, rep.seen)
		if !rep.val.granted {
			w := rep.val.waiting
			if w < 0 { // the master would not say (ACL): assume a herd
				w = waitingUnknown
			}
			a.report.waiting = max(a.report.waiting, w)
			return no, c.masters[i].wrap(ErrHeldByOther)
		}
		a.votes[i] = a.votes[i] && counts
		a.raised[i] = rep.val.raised
		if !a.votes[i] && dup == nil {
			return yes, c.masters[i].wrap(fmt.Errorf("granted, but it does not count by itself: %w", c.whyNotCounted(i)))
		}
		return yes, nil
	})
	c.tokens.note(a.highest)
	a.cause = cause
	if cause == nil {
		a.errs.add(a.r.silence()...)
	}
	a.errs.add(a.r.errs...)
	switch {
	case dup != nil:
		// One server counted twice proves nothing: never a lease.
		return a.failed(ErrNoQuorum, dup)
	case d != held:
		return a.failed(failureKind(a.r.out))
	}
	return nil
}

// fence chooses the lease's token: none without fencing; the proposal when
// round 1 already put it on a majority above every earlier token (the fast
// path); otherwise max+1, written back to a majority (round 2).
func (a *attempt) fence() (fencing.Token, error) {
	c := a.c
	switch {
	case !c.cfg.fencing:
		return 0, nil
	case a.proposal > 0 && fastPath(a.r.out, a.votes, a.raised, c.quorum):
		c.tokens.note(a.proposal)
		return a.proposal, nil // already on a majority: no write-back round
	}
	next := a.highest
	for _, up := range a.raised {
		if up {
			next = max(next, a.proposal) // some counters are at the proposal now
		}
	}
	wb := c.writeBack(a.ctx, a.key, a.value, a.r.masters(yes), next+1, c.masterTimeout(a.ttl), c.deadline(a.start, a.ttl))
	a.errs.add(wb.errs...)
	if wb.token == 0 {
		a.cause = wb.cause
		return 0, a.failed(wb.kind)
	}
	c.tokens.note(wb.token)
	return wb.token, nil
}

// failed ends an attempt whose round 1 was sent: cleanup of every key it
// may have placed (in the background where answers are still to come), then
// the error.
func (a *attempt) failed(kind error, extra ...error) error {
	c := a.c
	a.errs.add(extra...)
	var granted func()
	if a.watchSplit && !errors.Is(kind, ErrNoQuorum) {
		split := make(chan struct{})
		granted = sync.OnceFunc(func() { close(split) })
		a.report.split = split
	}
	c.cleanupAttempt(a.key, a.value, a.ttl, a.start, a.r.calls, granted)
	return a.fail(kind, a.cause)
}

// fail builds the attempt's error: kind (ErrNotAcquired or ErrNoQuorum), the
// count of round 1, one line per master.
func (a *attempt) fail(kind, cause error) error {
	c := a.c
	e := &Error{Op: "lock", Key: a.key, Kind: kind, Quorum: c.quorum, Masters: a.errs.list(), Cause: cause, Of: len(c.masters)}
	if a.r != nil {
		e.Granted, e.Answered = a.r.count(yes), a.r.answered()
		for i, o := range a.r.out {
			if o == yes && a.votes[i] {
				e.Counted++
			}
		}
	}
	if e.Cause == nil {
		e.Cause = ctxDone(a.ctx) // it may have ended before the round, e.g. while the client certified masters
	}
	if e.Cause != nil {
		e.Kind = ErrNotAcquired
	}
	if c.observing() && a.report.masters == nil {
		a.report.granted = e.Granted
		if a.r != nil {
			a.report.masters = a.r.results(e.Masters)
		} else {
			a.report.masters = c.masterResults(e.Masters)
		}
	}
	c.cfg.logger.Debug("redlock: attempt failed", "key", a.key, "granted", e.Granted, "counted", e.Counted, "quorum", c.quorum, "err", e)
	return e
}

// sendAcquire builds round 1's request: one script call, sent the same to
// every master, with an INFO after it (rule V).
func (c *Client) sendAcquire(key string, bucket int, value string, ttl time.Duration, proposal fencing.Token, releasedValue string) func(*master) request[grant] {
	buckets := ""
	if c.cfg.fencing {
		buckets = strconv.Itoa(c.cfg.buckets)
	}
	call := newScriptCall(acquireScript,
		[]string{key, keys.Bucket(bucket), keys.Legacy(key), keys.Floor, keys.Cert, keys.Lambda, keys.FenceBuckets, keys.Incarnation},
		value, ttl.Milliseconds(), proposal.String(), releasedValue, keys.ChannelPrefix+key, buckets)
	call.lineage = c.cfg.quarantine || !c.identified.Load() // without quarantine, until every master was identified
	rq := request[grant]{call: call, parse: func(cmd *redis.Cmd) (grant, error) {
		res, err := cmd.Slice()
		if err != nil {
			return grant{}, err
		}
		return parseGrant(res)
	}}
	return func(*master) request[grant] { return rq }
}

func parseGrant(res []any) (grant, error) {
	if len(res) != 6 {
		return grant{}, fmt.Errorf("acquire script returned %d values, want 6", len(res))
	}
	n, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	cert, ok3 := res[2].(string)
	raised, ok4 := res[3].(int64)
	waiting, ok5 := res[4].(int64)
	inc, ok6 := res[5].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return grant{}, fmt.Errorf("acquire script returned %T, %T, %T, %T, %T, %T", res[0], res[1], res[2], res[3], res[4], res[5])
	}
	t, err := parseCounter(ctr)
	if err != nil {
		return grant{}, err
	}
	return grant{granted: n == 1, counter: t, cert: cert, inc: inc, raised: raised == 1, waiting: waiting}, nil
}

func parseCounter(s string) (fencing.Token, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || fencing.Token(v) > fencing.MaxToken {
		return 0, fmt.Errorf("fencing counter %q is not an integer below 2^53", s)
	}
	return fencing.Token(v), nil
}

// fastPath reports whether round 1 already put its proposed token on a
// majority above every earlier token, so that round 2 is not needed: q
// masters that count by themselves granted and raised their counter to the
// proposal (their counters were below it, and any earlier token sits on a
// write-back majority that shares an intact master with them), or every
// master granted and raised (the all-grant rule's counterpart: every
// counter was below it). docs/fencing.md gives the argument; the spin model
// checks it.
func fastPath(out []outcome, votes, raised []bool, q int) bool {
	counted, all := 0, true
	for i, o := range out {
		up := o == yes && raised[i]
		all = all && up
		if up && votes[i] {
			counted++
		}
	}
	return counted >= q || all
}

// duplicateError says that masters i and j are the same server.
func duplicateError(i, j int, masters []*master, runID string) error {
	return masters[j].wrap(fmt.Errorf("%w: it is master %d (%s) again: run_id %.8s… answers at both addresses, and one server must not be counted twice",
		probe.ErrDuplicate, i, masters[i].addr, runID))
}

// isAnswer reports whether err is the master's own answer (a Redis error
// reply): the master was reached and nothing of ours is still queued there.
// It does not prove that nothing was applied: go-redis may have retried
// after a lost reply to a command that did run.
func isAnswer(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}
