package redlock

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// TryLock makes one attempt to acquire key for ttl on a majority of masters.
//
// The attempt sends SET key value NX PX ttl (inside a script that also reads
// the key's fencing counter and the master's certificate) to every master in
// parallel and returns as soon as a majority granted or a majority became
// impossible; it never waits for the slowest master. A grant counts by
// itself only from a master whose certificate names the lineage an INFO sent
// right after it reports (rule V of docs/safety.md); other masters are asked
// too, and their grants count in a round that every master granted, which is
// what lets freshly started masters lock at once. With fencing on (the
// default) the winner then writes its token back to a majority unless round
// 1 already put it there. The lease is held only if its remaining validity,
// ttl − elapsed − (ttl·drift + 2 ms) measured on the monotonic clock from
// before the first send, is positive.
//
// On failure the owner-checked delete is sent to every master that may hold
// the attempt's key, including those that did not answer, and retried in
// the background where the answer is unknown (see WithCleanupHorizon).
//
// Errors: ErrInvalidArgument for bad input (a nil ctx included); an *Error
// matching ErrNotAcquired when the key is held elsewhere, ErrNoQuorum (which
// also matches ErrNotAcquired) when too few masters answered or count (and
// ErrMisconfigured too when a majority refused for good, e.g. NOPERM), and
// ctx's error when ctx ended first; ErrClosed after Close.
func (c *Client) TryLock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(ctx, key, ttl, opts)
	if err != nil {
		return nil, err
	}
	start := c.cfg.clock.Now()
	l, report, err := c.attempt(ctx, key, ttl, lc, false, nil)
	c.observeAcquire(ctx, key, start, 1, report, l, err)
	return l, err
}

// prepare validates a lock call's arguments and records its TTL, so that
// the quarantine of this very call uses it.
func (c *Client) prepare(ctx context.Context, key string, ttl time.Duration, opts []LockOption) (lockConfig, error) {
	if err := checkCtx(ctx); err != nil {
		return lockConfig{}, err
	}
	if c.closed() {
		return lockConfig{}, ErrClosed
	}
	if err := c.checkKeyTTL(key, ttl); err != nil {
		return lockConfig{}, err
	}
	lc, err := applyLockOptions(opts)
	if err != nil {
		return lc, err
	}
	if lc.autoExtend && lc.extendInterval >= c.validity(ttl) {
		return lc, invalid("auto-extend interval %v is not shorter than the validity of a %v lease", lc.extendInterval, ttl)
	}
	c.noteTTL(ttl)
	return lc, nil
}

// Lock acquires key for ttl, retrying until it succeeds or ctx ends.
//
// Callers of one Client waiting for the same key line up first come, first
// served; the head of the line attempts, backs off with jittered exponential
// backoff (WithRetry) and wakes early when a holder releases (the release
// publishes; the Client shares one subscription per master among its
// waiters). Woken, it attempts at once when the masters that refused it saw
// no other client subscribed to the key, and otherwise after a random delay
// of up to two attempt durations, so that the heads of several processes do
// not split the vote.
//
// Errors: as TryLock; when ctx ends, the *Error matches ctx's error and the
// last attempt's failure; ErrClosed when the Client is closed while the call
// waits (no attempt starts after Close). An attempt's *Error that matches
// ErrMisconfigured (too many masters refuse the commands for good: NOPERM,
// WRONGTYPE, ...) or ErrTokensExhausted is returned at once: waiting would
// not change it.
func (c *Client) Lock(ctx context.Context, key string, ttl time.Duration, opts ...LockOption) (lease *Lease, err error) {
	lc, err := c.prepare(ctx, key, ttl, opts)
	if err != nil {
		return nil, err
	}
	start := c.cfg.clock.Now()
	attempts, splits := 0, 0
	var report attemptReport
	defer func() { c.observeAcquire(ctx, key, start, attempts, report, lease, err) }()
	// A free key costs what TryLock costs: while nobody of this Client waits
	// for the key or holds it, the first attempt goes out before any wake-up
	// machinery (no subscription; the caller only heads the key's line). A refusal then subscribes and
	// lines up, and the line's first attempt follows at once: a release
	// between the refusal and the subscription is not missed. Without
	// release notifications there is nothing to miss: the line waits first.
	waitFirst := false
	var took time.Duration
	var leave func()
	if !c.holders.holds(key) {
		// The fast path heads the line, so that callers of this Client that
		// come while it attempts wait behind it instead of splitting the vote.
		if head, ok := c.queues.headIfIdle(key); ok {
			attempts++
			began := c.cfg.clock.Now()
			lease, report, err = c.attempt(ctx, key, ttl, lc, true, nil)
			if err == nil || !worthWaiting(err) {
				head()
				return lease, err
			}
			took, waitFirst, leave = c.cfg.clock.Now().Sub(began), !c.cfg.notifications, head
		}
	}
	// Subscribe before queueing: the key stays subscribed while anyone of
	// this Client waits for it, so a release is not missed between heads.
	// A fast path that was refused stays head: its next attempt, after the
	// subscription, goes out at once.
	wake, unwatch := c.notifier.watch(key)
	defer unwatch()
	var jerr error
	if leave == nil {
		leave, jerr = c.queues.join(ctx, key, c.closing())
	}
	defer leave()
	if errors.Is(jerr, ErrClosed) {
		return nil, jerr
	}
	if jerr != nil {
		return nil, &Error{Op: "lock", Key: key, Kind: ErrNotAcquired, Quorum: c.quorum, Cause: jerr}
	}

	b := c.cfg.newBackOff()
	b.Reset()
	// rl is a release's deletes handed to this head (handoff.go): the next
	// attempt sends them in front of its acquire. Whoever returns first
	// sends what nobody took.
	var rl *relay
	defer func() { rl.flush(c) }()
	for {
		woken := wake() // taken before the attempt: a release during it is not missed
		heldHere := c.holders.holds(key)
		if !waitFirst {
			began := c.cfg.clock.Now()
			attempts++
			// A split vote matters when the key is contended across clients;
			// while a lease of this Client holds it, the release will wake the
			// line (and a refusal by masters its delete has not reached yet is
			// no split).
			// While a lease of this Client holds the key, the head is ready
			// for a hand-off during its attempt too: a release that comes
			// meanwhile gives it its deletes, which go out with the next
			// attempt, right after this one's refusal.
			var p *parked
			if heldHere && report.waiting <= 1 {
				p = c.handoffs.park(key)
			}
			lease, report, err = c.attempt(ctx, key, ttl, lc, !heldHere, rl)
			rl = c.handoffs.leave(key, p) // sent by the deferred flush on return
			if err == nil {
				return lease, nil
			}
			if errors.Is(err, ErrClosed) {
				return nil, err
			}
			took = c.cfg.clock.Now().Sub(began)
			heldHere = heldHere || c.holders.holds(key)
			if !worthWaiting(err) {
				return nil, err
			}
			if rl != nil {
				if report.waiting <= 1 {
					b.Reset()
					continue // the release's deletes and this head's acquire, at once
				}
				rl.flush(c) // other clients wait: no head start for this one
				rl = nil
			}
		}
		waitFirst = false
		var e *Error
		errors.As(err, &e)
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		split := report.split
		if heldHere {
			split = nil
		}
		// While a lease of this Client holds the key and no other client
		// waits, the head parks for a hand-off: the release then sends its
		// deletes through the head's next attempt, in front of its acquire.
		var p *parked
		var given <-chan struct{}
		if heldHere && report.waiting <= 1 {
			if p = c.handoffs.park(key); p != nil {
				given = p.given
			}
		}
		turn := c.awaitTurn(ctx, d, woken, split, given)
		rl = c.handoffs.leave(key, p)
		switch turn {
		case turnEnded:
			e.Cause = ctxErr(ctx)
			return nil, e
		case turnClosed:
			return nil, ErrClosed
		case turnHandedOff, turnBackedOff:
			splits = 0
		case turnReleased:
			splits = 0
			// Every waiting client wakes on the same release. Attempts that
			// start together split the vote and all fail; a random delay of
			// up to two attempt durations spreads them apart. There is no
			// herd when this Client's own lease held the key (its next Lock
			// joins the line behind this head) and the masters that refused
			// saw no other client subscribed to the key's channel: attempt
			// at once. A holder in another client may lock again the moment
			// it releases, so waiting for one keeps the delay.
			if heldHere && report.waiting <= 1 {
				continue
			}
			if !c.sleep(ctx, time.Duration(rand.Int64N(int64(2*took)+1))) {
				return nil, c.waitEnded(ctx, e)
			}
		case turnSplit:
			// A split vote: a master granted this attempt (now or in a late
			// answer) while others were taken, perhaps by a contender whose
			// attempt failed too. Then nobody holds the key and no release
			// will wake anybody: retry after a random delay of up to two
			// attempt durations, doubled with every split in a row (a
			// holder whose key is missing on some masters looks the same),
			// instead of the growing backoff, so that one contender goes
			// first.
			splits = min(splits+1, 16)
			if !c.sleep(ctx, time.Duration(rand.Int64N(int64(took)<<splits+1))) {
				return nil, c.waitEnded(ctx, e)
			}
		}
	}
}

// turn is why Lock's wait between two attempts ended.
type turn uint8

const (
	turnEnded     turn = iota // the caller's context ended
	turnClosed                // the Client closed
	turnHandedOff             // a release of this Client gave the head its deletes (handoff.go)
	turnReleased              // a release was published on the key's channel
	turnSplit                 // the last attempt was granted somewhere: a split vote
	turnBackedOff             // the backoff's delay d passed
)

// awaitTurn waits, up to d, for whichever of Lock's wake-ups comes first. A
// nil channel never comes.
func (c *Client) awaitTurn(ctx context.Context, d time.Duration, woken, split, given <-chan struct{}) turn {
	t := c.cfg.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return turnEnded
	case <-c.closing():
		return turnClosed
	case <-given:
		return turnHandedOff
	case <-woken:
		return turnReleased
	case <-split:
		return turnSplit
	case <-t.C():
		return turnBackedOff
	}
}

// worthWaiting reports whether Lock waits and tries again after err: a
// refusal or too few answers, but not the context's end, exhausted tokens,
// masters that refuse the library's commands for good (ErrMisconfigured), a
// bad argument or Close.
func worthWaiting(err error) bool {
	var e *Error
	return errors.As(err, &e) && e.Cause == nil && !errors.Is(err, ErrTokensExhausted) && !e.misconfigured()
}

// waitEnded is Lock's answer when a wait between attempts ends early:
// ErrClosed, or the last attempt's error with ctx's cause.
func (c *Client) waitEnded(ctx context.Context, e *Error) error {
	if c.closed() {
		return ErrClosed
	}
	e.Cause = ctxErr(ctx)
	return e
}

// sleep waits d on the client's clock; false when ctx ended or the client
// closed first.
func (c *Client) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctxDone(ctx) == nil && !c.closed()
	}
	t := c.cfg.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-c.closing():
		return false
	case <-t.C():
		return true
	}
}

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
	// relay is a release's deletes handed to this attempt (handoff.go):
	// round 1 sends each in front of its acquire to the same master; run
	// sends them alone when it ends before round 1.
	relay *relay
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

// attempt makes one attempt for key (TryLock's, and each of Lock's).
func (c *Client) attempt(ctx context.Context, key string, ttl time.Duration, lc lockConfig, watchSplit bool, rl *relay) (*Lease, attemptReport, error) {
	a := &attempt{c: c, ctx: ctx, key: key, ttl: ttl, lc: lc, watchSplit: watchSplit, relay: rl, errs: newMasterErrs(len(c.masters))}
	defer rl.flush(c) // it ended before round 1
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
	el := c.electorate(a.ctx, a.key, a.ttl)
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
	// The one clock reading after the rounds: the validity left is judged
	// and logged from it (the suite's acquire-pause nemesis stops here).
	validUntil := c.deadline(a.start, a.ttl)
	now := c.cfg.clock.Now()
	if !now.Before(validUntil) {
		return nil, a.failed(ErrNotAcquired, fmt.Errorf("no validity left: the attempt took %v of a %v TTL", now.Sub(a.start), a.ttl))
	}
	if c.observing() {
		a.report.granted, a.report.masters = a.r.count(yes), a.r.results(a.errs.list())
	}
	c.cfg.logger.Debug("redlock: acquired", "key", a.key, "token", uint64(token), "validity", validUntil.Sub(now))
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
	r, acq := prepareRound(a.ctx, c, send, c.masterTimeout(a.ttl), c.sendAcquire(a.key, b, a.value, a.ttl, a.proposal, c.released.value(a.key, a.start)))
	a.r = r
	c.submit(chain(a.relay.take(), acq))
	replIDs := make(map[string]int, len(c.masters))
	var dups []error // both masters of each pair that is one server
	d, cause := a.r.collect(a.ctx, a.votes, c.quorum, func(i int, rep reply[grant]) (outcome, error) {
		a.highest = max(a.highest, rep.val.counter)
		if id := rep.seen.lineage.ReplID; rep.seen.err == nil && rep.seen.role == "master" {
			c.noteReplID(i, id, rep.seen.role)
			if j, twice := replIDs[id]; twice {
				dups = append(dups, duplicateError(j, i, c.masters, id), duplicateError(i, j, c.masters, id))
				a.votes[i], a.votes[j] = false, false
			} else {
				replIDs[id] = i
			}
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
		if !a.votes[i] && dups == nil {
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
	case dups != nil:
		// One server counted twice proves nothing: never a lease. Neither
		// master of a pair counts, so both are refusals for good
		// (ErrMisconfigured once no majority is left).
		return a.failed(ErrNoQuorum, dups...)
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
func duplicateError(i, j int, masters []*master, replID string) error {
	return masters[j].wrap(fmt.Errorf("%w: it is master %d (%s) again: master_replid %.8s… answers at both addresses, and one server must not be counted twice",
		probe.ErrDuplicate, i, masters[i].addr, replID))
}
