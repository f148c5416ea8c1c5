package redlock

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/probe"
)

// round sends one command to several masters in parallel and decides, with
// the quorum rule (decide), as their answers come. It never waits for a
// master longer than the per-master timeout, whatever timeouts the caller's
// go-redis clients were built with: each command runs in a goroutine of its
// own (owned by the Client, see spawn), and one stuck in a client that
// ignores deadlines is simply not waited for.
type round[T any] struct {
	c       *Client
	calls   []*call[T] // by master index; nil where nothing was sent
	out     []outcome  // by master index
	suspect []bool     // suspect when the round began: not waited for
	errs    []error    // per-master errors, in the order they came
	replies chan int   // index of a master whose call is done
	timer   Timer
	start   time.Time
	expired bool // the per-master timeout passed before the decision
}

// request is what a round sends to one master: a script call, whose answer
// parse reads, sent through the master's batcher; or, for what one script
// cannot express (DELEX and its EXISTS), run, called in a goroutine of its
// own with a context bounded by the per-master timeout.
type request[T any] struct {
	call  *scriptCall
	parse func(*redis.Cmd) (T, error)
	run   func(ctx context.Context, m *master) (T, error)
}

// scriptCall is one script with its keys and arguments, and the EVALSHA
// command line, built once for every master a round sends it to. lineage
// asks the batcher to send an INFO right after it (rule V).
type scriptCall struct {
	script  *redis.Script
	keys    []string
	args    []any
	evalsha []any
	lineage bool
	// merge, when set, says how the call joins its neighbours in one call
	// of a script that takes many locks (merge.go).
	merge *merger
}

func newScriptCall(script *redis.Script, keys []string, args ...any) *scriptCall {
	line := make([]any, 0, 3+len(keys)+len(args))
	line = append(line, "evalsha", script.Hash(), len(keys))
	for _, k := range keys {
		line = append(line, k)
	}
	return &scriptCall{script: script, keys: keys, args: args, evalsha: append(line, args...)}
}

// startRound sends req's command to each master in idx; the other masters
// count as unsent. A command is bounded by timeout and detached from ctx's
// cancellation: an answer that comes after the caller stopped waiting still
// tells cleanup what happened.
func startRound[T any](ctx context.Context, c *Client, idx []int, timeout time.Duration,
	req func(m *master) request[T]) *round[T] {
	r, batched := prepareRound(ctx, c, idx, timeout, req)
	c.submit(batched)
	return r
}

// prepareRound is startRound without handing the script calls to the
// batchers: it returns them by master index (nil where nothing is to be
// queued), for the caller to submit (Client.submit), alone or with a call
// chained behind each.
func prepareRound[T any](ctx context.Context, c *Client, idx []int, timeout time.Duration,
	req func(m *master) request[T]) (*round[T], []*queued) {
	n := len(c.masters)
	batched := make([]*queued, n)
	r := &round[T]{
		c:       c,
		calls:   make([]*call[T], n),
		out:     make([]outcome, n),
		suspect: make([]bool, n),
		replies: make(chan int, len(idx)),
		timer:   c.cfg.clock.NewTimer(timeout),
		start:   c.cfg.clock.Now(),
	}
	for i := range r.out {
		r.out[i] = unsent
	}
	deadline := time.Now().Add(timeout)
	for _, i := range idx {
		m := c.masters[i]
		cl := &call[T]{done: make(chan struct{}), r: r, i: i}
		r.calls[i] = cl
		r.out[i] = waiting
		if m.suspect.Load() {
			r.out[i], r.suspect[i] = silent, true
		}
		if !m.tryAcquireSlot() {
			cl.finish(reply[T]{err: ErrMasterBusy})
			continue
		}
		rq := req(m)
		if rq.run != nil {
			detached := context.WithoutCancel(ctx)
			if !c.spawn(func() {
				cctx, cancel := context.WithDeadline(detached, deadline)
				v, err := rq.run(cctx, m)
				cancel()
				cl.settle(v, err)
			}) {
				var zero T
				cl.settle(zero, ErrClosed)
			}
			continue
		}
		cl.parse = rq.parse
		batched[i] = &queued{deadline: deadline, call: rq.call, to: cl}
	}
	return r, batched
}

// submit hands each master's queued calls (by master index, nil for none)
// to its batcher; calls that find no room are answered ErrMasterBusy
// (ErrClosed after Close).
func (c *Client) submit(batched []*queued) {
	for i, q := range batched {
		if q != nil {
			c.submitTo(i, q)
		}
	}
}

// submitTo is submit of one call to master i.
func (c *Client) submitTo(i int, q *queued) {
	if !c.masters[i].batch.submit(q) {
		err := ErrMasterBusy
		if c.closed() {
			err = ErrClosed
		}
		answerErr(q, err)
	}
}

// collect takes answers, classifying each with classify (an outcome, and
// the master's error for a no or a failure), until the round decides or ctx
// ends (cause is then ctx's error and the decision is undecided). When the
// per-master timeout passes, the masters still waited for become silent
// and suspect.
func (r *round[T]) collect(ctx context.Context, votes []bool, q int,
	classify func(i int, rep reply[T]) (outcome, error)) (d decision, cause error) {
	for {
		if d = decide(r.out, votes, q); d != undecided {
			r.timer.Stop()
			if d == failed {
				r.wakeSuspects()
			}
			return d, nil
		}
		select {
		case i := <-r.replies:
			r.take(i, classify)
		case <-r.timer.C():
			r.expire()
		case <-ctx.Done():
			r.timer.Stop()
			return undecided, ctxErr(ctx)
		}
	}
}

// wakeSuspects pings, in the background, the suspect masters a failed round
// did not wait for: a master that answers is no longer suspect, so a master
// that resumed counts again from the next attempt on, without a round
// having to wait for it first.
func (r *round[T]) wakeSuspects() {
	for i, o := range r.out {
		if o == silent && r.suspect[i] {
			r.c.masters[i].ping(r.c)
		}
	}
}

// await takes answers until every master answered or the per-master
// timeout passed.
func (r *round[T]) await(classify func(i int, rep reply[T]) (outcome, error)) {
	defer r.timer.Stop()
	for r.count(waiting) > 0 {
		select {
		case i := <-r.replies:
			r.take(i, classify)
		case <-r.timer.C():
			r.expire()
		}
	}
}

// take records master i's answer.
func (r *round[T]) take(i int, classify func(i int, rep reply[T]) (outcome, error)) {
	rep := r.calls[i].rep
	var o outcome
	var err error
	if rep.err != nil {
		o, err = r.c.masters[i].classify(rep.err)
	} else {
		o, err = classify(i, rep)
	}
	r.out[i] = o
	if err != nil {
		r.errs = append(r.errs, err)
	}
}

// expire marks the masters still waited for silent and suspect.
func (r *round[T]) expire() {
	r.expired = true
	for i, o := range r.out {
		if o == waiting {
			r.out[i] = silent
			r.c.masters[i].suspect.Store(true)
		}
	}
}

// The reasons silence gives, made once: every successful attempt reports
// the masters it did not wait for.
var (
	errNotWaitedSuspect = fmt.Errorf("%w (it let an earlier round time out and has not answered since)", ErrNotWaitedFor)
	errNotWaitedDecided = fmt.Errorf("%w (the round had decided)", ErrNotWaitedFor)
)

// silence explains every master whose answer had not come when the round
// decided, in master order.
func (r *round[T]) silence() []error {
	var errs []error
	for i, o := range r.out {
		if !o.open() {
			continue
		}
		m := r.c.masters[i]
		switch {
		case r.suspect[i]:
			errs = append(errs, m.wrap(errNotWaitedSuspect))
		case r.expired:
			errs = append(errs, m.wrap(ErrMasterTimeout))
		default:
			errs = append(errs, m.wrap(errNotWaitedDecided))
		}
	}
	return errs
}

// results is each master's part of the round for an Observer: its latency
// when it answered, and its error (from errs, which holds MasterErrors) when
// it did not agree.
func (r *round[T]) results(errs []error) []MasterResult {
	out := r.c.masterResults(errs)
	for i, cl := range r.calls {
		if cl == nil {
			continue
		}
		if _, ok := cl.result(); ok {
			out[i].Latency = cl.latency
		}
	}
	return out
}

// answered counts the masters that answered (yes, no or an error reply).
func (r *round[T]) answered() int {
	n := 0
	for _, o := range r.out {
		if o.answered() {
			n++
		}
	}
	return n
}

// count returns how many masters have outcome o.
func (r *round[T]) count(o outcome) int {
	n := 0
	for _, x := range r.out {
		if x == o {
			n++
		}
	}
	return n
}

// masters lists the masters with outcome o.
func (r *round[T]) masters(o outcome) []int {
	var idx []int
	for i, x := range r.out {
		if x == o {
			idx = append(idx, i)
		}
	}
	return idx
}

// outcomeOf is the outcome of a command that failed with err: nothing sent,
// an error reply, or a transport error whose command may still run.
func outcomeOf(err error) outcome {
	switch {
	case errors.Is(err, ErrMasterBusy), errors.Is(err, ErrClosed):
		return unsent
	case isAnswer(err):
		return errorReply
	}
	return transport
}

// classify is outcomeOf with a MasterError naming the state: nothing sent,
// an error reply, a timeout, or an unreachable master with its cause.
func (m *master) classify(err error) (outcome, error) {
	o := outcomeOf(err)
	switch {
	case o == unsent:
		return o, m.wrap(err)
	case o == errorReply:
		return o, m.wrap(fmt.Errorf("%w: %w", ErrReplyError, err))
	case errors.Is(err, context.DeadlineExceeded):
		return o, m.wrap(ErrMasterTimeout)
	}
	return o, m.wrap(fmt.Errorf("%w (%s): %w", ErrUnreachable, probe.Cause(err), err))
}

// everyoneVotes is the votes mask of rounds where every master counts.
func (c *Client) everyoneVotes() []bool {
	v := make([]bool, len(c.masters))
	for i := range v {
		v[i] = true
	}
	return v
}

// isAnswer reports whether err is the master's own answer (a Redis error
// reply): the master was reached and nothing of ours is still queued there.
// It does not prove that nothing was applied: go-redis may have retried
// after a lost reply to a command that did run.
func isAnswer(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

// outcome is what became of one master's command in a round, as far as the
// round knows when it decides.
type outcome uint8

const (
	// waiting: sent, no answer yet, and worth waiting for.
	waiting outcome = iota
	// silent: sent, no answer yet, and not waited for (the per-master timeout
	// passed, or the master is suspect: it let an earlier round time out).
	silent
	// yes: the master did what was asked (granted, raised, extended, deleted).
	yes
	// no: the master refused: the key belongs to another owner.
	no
	// errorReply: the master answered with an error. It was reached, and
	// nothing of ours is still queued there; go-redis may have retried a
	// command that had run, so a key of ours may exist.
	errorReply
	// transport: a network error. The command may still sit in the master's
	// socket and run later (a SIGSTOPped master runs it on SIGCONT).
	transport
	// unsent: nothing reached the master (too many commands in flight, or it
	// was not asked). Nothing of ours is there.
	unsent
)

// answered reports whether the master answered (yes, no or an error reply).
func (o outcome) answered() bool { return o == yes || o == no || o == errorReply }

// open reports whether the master's answer is still to come.
func (o outcome) open() bool { return o == waiting || o == silent }

// mayHoldOurKey reports whether a SET of ours may exist on the master, now
// or later: everything but a refusal and a command never sent.
func (o outcome) mayHoldOurKey() bool { return o != no && o != unsent }

// settled reports whether no command of ours can still be queued at the
// master, so that one owner-checked delete answered "not there" proves that
// nothing of ours is left.
func (o outcome) settled() bool { return o == yes || o == no || o == errorReply || o == unsent }

// decision is a round's verdict so far.
type decision uint8

const (
	undecided decision = iota
	held               // enough masters said yes
	failed             // enough can no longer say yes
)

// decide is the quorum rule of every round. votes[i] says whether master i's
// yes counts by itself (it is out of quarantine); q is the quorum over all
// len(out) masters. The round succeeds when q counting masters said yes, or
// when every master said yes: under the fault model (fewer than q masters
// lost data within one quarantine) a live lease of another owner would still
// be on at least one master, which would have refused, so a round that every
// master granted may count quarantined masters too (docs/safety.md). It fails
// when neither can happen whatever the masters still waited for answer.
func decide(out []outcome, votes []bool, q int) decision {
	counted, pending := 0, 0
	everyYes, everyYesPossible := true, true
	for i, o := range out {
		everyYes = everyYes && o == yes
		everyYesPossible = everyYesPossible && (o == yes || o == waiting)
		if votes[i] {
			switch o {
			case yes:
				counted++
			case waiting:
				pending++
			}
		}
	}
	switch {
	case counted >= q || everyYes:
		return held
	case counted+pending < q && !everyYesPossible:
		return failed
	}
	return undecided
}

// failureKind tells "held by another owner" from "too few answers": a round
// failed with ErrNotAcquired when some master refused, and with ErrNoQuorum
// when only errors and silence stood in the way.
func failureKind(out []outcome) error {
	for _, o := range out {
		if o == no {
			return ErrNotAcquired
		}
	}
	return ErrNoQuorum
}
