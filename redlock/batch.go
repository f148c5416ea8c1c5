package redlock

import (
	"context"
	"errors"
	"strings"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// Auto-pipelining. Concurrent operations send their scripts to a master at
// the same moment; sending them one per round trip costs one write and one
// read system call each, and from a few goroutines on that is what bounds
// throughput (docs/performance.md). A master's batcher takes whatever is
// queued when one of its workers is free and sends it as one pipeline. A
// lone command goes out at once, as before; under load, commands wait at
// most one round trip for a worker. A call that finds nothing on the wire
// is sent at once from its own goroutine.
const (
	batchWorkers = 4   // pipelines in flight per master
	maxBatch     = 128 // commands per pipeline
	batchQueue   = 1024
	// directSends is how many calls may be on the wire to a master before
	// new ones queue (2 measured no better for a lone caller and worse under
	// load).
	directSends = 1
)

// queued is one script call waiting for a pipeline.
type queued struct {
	ctx    context.Context
	script *redis.Script
	keys   []string
	args   []any
	cmd    *redis.Cmd    // the answer, set before done is closed
	done   chan struct{} // closed when cmd is set
}

type batcher struct {
	c      *Client
	m      *master
	queue  chan *queued
	active atomic.Int32 // calls or pipelines on the wire to this master
}

func newBatcher(c *Client, m *master) *batcher {
	return &batcher{c: c, m: m, queue: make(chan *queued, batchQueue)}
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

// eval runs script on the master through the batcher, or directly when its
// queue is full (the master is stalled: the caller's own timer decides).
func (b *batcher) eval(ctx context.Context, script *redis.Script, keys []string, args ...any) *redis.Cmd {
	if b.c.closed() { // no workers any more
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ErrClosed)
		return cmd
	}
	// Nothing on the wire: send it at once from this goroutine, as without
	// batching. Calls that come while it is out queue up for the workers.
	if b.active.Add(1) <= directSends {
		defer b.active.Add(-1)
		return script.Run(ctx, b.m.rdb, keys, args...)
	}
	b.active.Add(-1)
	q := &queued{ctx: ctx, script: script, keys: keys, args: args, done: make(chan struct{})}
	select {
	case b.queue <- q:
	default:
		return script.Run(ctx, b.m.rdb, keys, args...)
	}
	select {
	case <-q.done:
		return q.cmd
	case <-ctx.Done():
		cmd := redis.NewCmd(ctx)
		cmd.SetErr(ctx.Err()) // it may still be sent: a transport-like, unknown fate
		return cmd
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
			batch = append(batch[:0], q)
		fill:
			for len(batch) < maxBatch {
				select {
				case q := <-b.queue:
					batch = append(batch, q)
				default:
					break fill
				}
			}
			b.exec(batch)
		}
	}
}

// exec sends batch as one pipeline of EVALSHA, and the scripts a master does
// not have (after a restart) as a second pipeline of EVAL. Calls whose
// context already ended are not sent.
func (b *batcher) exec(batch []*queued) {
	var live []*queued
	var deadline time.Time
	for _, q := range batch {
		if err := q.ctx.Err(); err != nil {
			q.cmd = redis.NewCmd(q.ctx)
			q.cmd.SetErr(err)
			close(q.done)
			continue
		}
		live = append(live, q)
		if d, ok := q.ctx.Deadline(); ok && d.After(deadline) {
			deadline = d
		}
	}
	if len(live) == 0 {
		return
	}
	b.active.Add(1)
	defer b.active.Add(-1)
	ctx, cancel := context.Background(), context.CancelFunc(func() {})
	if !deadline.IsZero() {
		ctx, cancel = context.WithDeadline(ctx, deadline)
	}
	defer cancel()
	pipe := b.m.rdb.Pipeline()
	for _, q := range live {
		q.cmd = q.script.EvalSha(ctx, pipe, q.keys, q.args...)
	}
	_, execErr := pipe.Exec(ctx)
	stampUnanswered(live, execErr)
	var missing []*queued
	for _, q := range live {
		if err := q.cmd.Err(); err != nil && isNoScript(err) {
			missing = append(missing, q)
		}
	}
	if len(missing) > 0 {
		pipe := b.m.rdb.Pipeline()
		for _, q := range missing {
			q.cmd = q.script.Eval(ctx, pipe, q.keys, q.args...)
		}
		_, execErr := pipe.Exec(ctx)
		stampUnanswered(missing, execErr)
	}
	for _, q := range live {
		close(q.done)
	}
}

// stampUnanswered gives the pipeline's error to the commands that have
// neither an answer nor an error: go-redis returns an error reply at login
// (WRONGPASS, NOAUTH) from Exec without stamping it on the commands, which
// would otherwise read as empty answers.
func stampUnanswered(qs []*queued, execErr error) {
	if execErr == nil {
		return
	}
	for _, q := range qs {
		if q.cmd.Err() == nil && q.cmd.Val() == nil {
			q.cmd.SetErr(execErr)
		}
	}
}

// drain answers what is still queued when the client closes.
func (b *batcher) drain() {
	for {
		select {
		case q := <-b.queue:
			q.cmd = redis.NewCmd(q.ctx)
			q.cmd.SetErr(ErrClosed)
			close(q.done)
		default:
			return
		}
	}
}

func isNoScript(err error) bool {
	var re redis.Error
	return errors.As(err, &re) && strings.HasPrefix(err.Error(), "NOSCRIPT")
}
