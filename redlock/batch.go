package redlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/probe"
)

// Auto-pipelining. Every script a round sends goes to its master's batcher:
// a few long-lived workers per master, each taking whatever is queued when
// it is free and sending it as one pipeline. A lone command goes out at
// once; under load, commands wait at most one round trip for a worker and
// share its system calls, on the client and on the server
// (docs/performance.md). The workers live as long as the Client: a round
// starts no goroutine per master, and a command's answer is handed to its
// round by a callback.
const (
	batchWorkers = 2   // pipelines in flight per master
	maxBatch     = 128 // commands per pipeline
)

// queued is one script call waiting for a pipeline.
type queued struct {
	deadline time.Time // not sent after it: answered ErrMasterBusy
	call     *scriptCall
	// to is given, once, from a worker, the answer (or the error that kept
	// the call from being sent).
	to answerer
	// then is a call to send right behind this one, in the same pipeline
	// (the next head's acquire behind a release: handoff.go), or nil.
	then *queued
}

// answerErr answers q and the calls chained behind it with err: never sent.
func answerErr(q *queued, err error) {
	for ; q != nil; q = q.then {
		cmd := redis.NewCmd(context.Background())
		cmd.SetErr(err)
		q.to.answer(cmd, unseen)
	}
}

// appendChain appends q and the calls chained behind it, in order.
func appendChain(batch []*queued, q *queued) []*queued {
	for ; q != nil; q = q.then {
		batch = append(batch, q)
	}
	return batch
}

// answerer takes a queued call's answer, with what the master said of
// itself right after it (when the call asked for it).
type answerer interface{ answer(*redis.Cmd, seen) }

// seen is a master's lineage and role from an INFO sent right after a
// script, in the same pipeline and so on the same connection: rule V
// (docs/safety.md) judges a grant by it. err is set when the INFO failed.
type seen struct {
	lineage probe.Lineage
	role    string
	err     error
}

// unseen is the seen of a call that did not ask, or was never sent.
var unseen = seen{err: errors.New("not asked")}

// lineageAfter adds an INFO to pipe when some call of calls asks for the
// master's lineage, and returns how to read it once the pipeline ran.
func lineageAfter(ctx context.Context, pipe redis.Pipeliner, calls []*queued) func() seen {
	asked := false
	for _, q := range calls {
		asked = asked || q.call.lineage
	}
	if !asked {
		return func() seen { return unseen }
	}
	info := pipe.Info(ctx, "replication") // the replication id names a master's history (probe.Lineage)
	return func() seen {
		if err := info.Err(); err != nil {
			return seen{err: err}
		}
		l, role, err := probe.ParseLineage(info.Val())
		return seen{lineage: l, role: role, err: err}
	}
}

type batcher struct {
	c     *Client
	m     *master
	queue chan *queued
}

// newBatcher makes m's batcher; its queue holds as many calls as may be in
// flight to m (the master's slots), so a call that holds a slot always
// finds room.
func newBatcher(c *Client, m *master) *batcher {
	return &batcher{c: c, m: m, queue: make(chan *queued, cap(m.slots))}
}

// start launches the workers. They stop when the client closes, once their
// pipeline in flight has returned; Close waits for them (with a caller's
// client that ignores deadlines, a stalled master can hold a pipeline for
// go-redis's read timeout).
func (b *batcher) start() {
	for range batchWorkers {
		b.c.spawn(b.work)
	}
}

// submit queues q, and the calls chained behind it, for the next free
// worker, which sends them in one pipeline, in order. It returns false,
// without answering them, when the client is closed or the queue is full.
func (b *batcher) submit(q *queued) bool {
	if b.c.closed() {
		return false
	}
	select {
	case b.queue <- q:
		return true
	default:
		return false
	}
}

func (b *batcher) work() {
	batch := make([]*queued, 0, maxBatch)
	for {
		select {
		case <-b.c.closing():
			b.drain()
			return
		case q := <-b.queue:
			batch = appendChain(batch[:0], q)
		fill:
			for len(batch) < maxBatch {
				select {
				case q := <-b.queue:
					batch = appendChain(batch, q)
				default:
					break fill
				}
			}
			b.exec(batch)
			clear(batch) // let the answered calls go
		}
	}
}

// exec sends batch as one pipeline of EVALSHA, neighbouring acquires merged
// into one call (merge.go), and the scripts a master does not have (after a
// restart) as a second pipeline of EVAL. Calls whose deadline passed while
// they were queued are not sent.
func (b *batcher) exec(batch []*queued) {
	now := time.Now()
	live := batch[:0:0]
	var deadline time.Time
	for _, q := range batch {
		if !now.Before(q.deadline) {
			cmd := redis.NewCmd(context.Background())
			cmd.SetErr(ErrMasterBusy) // it waited its whole timeout for a worker: never sent
			q.to.answer(cmd, unseen)
			continue
		}
		live = append(live, q)
		deadline = later(deadline, q.deadline)
	}
	if len(live) == 0 {
		return
	}
	ctx := context.Background()
	if b.m.deadlines {
		var cancel context.CancelFunc
		ctx, cancel = context.WithDeadline(ctx, deadline)
		defer cancel()
	}
	sends := sendings(live)
	pipe := b.m.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(sends))
	for i, s := range sends {
		cmds[i] = pipe.Do(ctx, s.call.evalsha...)
	}
	after := lineageAfter(ctx, pipe, live)
	_, execErr := pipe.Exec(ctx)
	stampUnanswered(cmds, execErr)
	lineages := make([]seen, len(sends))
	first := after()
	for i := range lineages {
		lineages[i] = first
	}
	var missing []int
	for i, cmd := range cmds {
		if err := cmd.Err(); err != nil && isNoScript(err) {
			missing = append(missing, i)
		}
	}
	if len(missing) > 0 {
		// NOSCRIPT: nothing ran. Calls whose deadline passed meanwhile keep
		// that error rather than being sent late.
		now := time.Now()
		missing = slices.DeleteFunc(missing, func(i int) bool { return !now.Before(sends[i].deadline()) })
	}
	if len(missing) > 0 {
		pipe := b.m.rdb.Pipeline()
		resent := make([]*redis.Cmd, 0, len(missing))
		var asking []*queued
		for _, i := range missing {
			sc := sends[i].call
			cmds[i] = sc.script.Eval(ctx, pipe, sc.keys, sc.args...)
			resent = append(resent, cmds[i])
			asking = append(asking, sends[i].of...)
		}
		after := lineageAfter(ctx, pipe, asking)
		_, execErr := pipe.Exec(ctx)
		stampUnanswered(resent, execErr)
		again := after()
		for _, i := range missing {
			lineages[i] = again
		}
	}
	for i, s := range sends {
		s.answer(cmds[i], lineages[i])
	}
}

func later(a, b time.Time) time.Time {
	if b.After(a) {
		return b
	}
	return a
}

// stampUnanswered gives the pipeline's error to the commands that have
// neither an answer nor an error: go-redis returns an error reply at login
// (WRONGPASS, NOAUTH) from Exec without stamping it on the commands, which
// would otherwise read as empty answers.
func stampUnanswered(cmds []*redis.Cmd, execErr error) {
	if execErr == nil {
		return
	}
	for _, cmd := range cmds {
		if cmd.Err() == nil && cmd.Val() == nil {
			cmd.SetErr(execErr)
		}
	}
}

// drain answers what is still queued when the client closes.
func (b *batcher) drain() {
	for {
		select {
		case q := <-b.queue:
			answerErr(q, ErrClosed)
		default:
			return
		}
	}
}

func isNoScript(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
