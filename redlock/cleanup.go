package redlock

import (
	"context"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"
)

// sendRelease is the owner-checked delete of one key on one master; it
// answers 1 when the key was value's and is now gone, 0 otherwise. With
// publish it wakes the key's waiters: only the release of a held lease does.
// Cleanup after a failed attempt does not, or two contenders that split the
// vote would wake each other in lockstep and split it again forever.
func sendRelease(key, value string, publish bool) func(context.Context, *master) (int64, error) {
	return func(ctx context.Context, m *master) (int64, error) {
		res, err := releaseBatch(ctx, m, []string{key}, []string{value}, publish)
		if err != nil {
			return 0, err
		}
		return res[0], nil
	}
}

// releaseBatch deletes each key on m that still holds its value: with
// DELEX key IFEQ value where the master has it (Redis ≥ 8.4), otherwise with
// release.lua. With publish, the key's waiters are woken.
func releaseBatch(ctx context.Context, m *master, keys, values []string, publish bool) ([]int64, error) {
	if m.hasDELEX() {
		return releaseDELEX(ctx, m, keys, values, publish)
	}
	args := make([]any, 0, len(values)+1)
	for _, v := range values {
		args = append(args, v)
	}
	if publish {
		args = append(args, ChannelPrefix)
	} else {
		args = append(args, "")
	}
	res, err := m.batch.eval(ctx, releaseScript, keys, args...).Int64Slice()
	if err == nil && len(res) != len(keys) {
		err = fmt.Errorf("release script answered %d results for %d keys", len(res), len(keys))
	}
	return res, err
}

// releaseDELEX is releaseBatch with the native command, pipelined: one round
// trip, like the script. The PUBLISH cannot depend on the delete inside a
// pipeline; waking waiters for a key that was not ours costs them one attempt.
func releaseDELEX(ctx context.Context, m *master, keys, values []string, publish bool) ([]int64, error) {
	pipe := m.rdb.Pipeline()
	cmds := make([]*redis.Cmd, len(keys))
	for i, k := range keys {
		cmds[i] = pipe.Do(ctx, "DELEX", k, "IFEQ", values[i])
	}
	if publish {
		for _, k := range keys {
			pipe.Publish(ctx, ChannelPrefix+k, "1")
		}
	}
	_, err := pipe.Exec(ctx)
	if err != nil && isUnknownCommand(err) {
		m.delexRefused.Store(true) // downgraded, or behind a proxy: the script from now on
		m.delex.Store(delexNo)
	}
	if err != nil {
		return nil, err
	}
	out := make([]int64, len(keys))
	for i, c := range cmds {
		if out[i], err = c.Int64(); err != nil {
			return nil, err
		}
	}
	return out, nil
}

// fate tells a cleaner what became of the command that may have left a key:
// known is false while it has not returned; mayExist says whether the key may
// exist; settled says that no command of ours that could create it can still
// be waiting in the master's socket, so one "0" answer ends the cleanup.
type fate func() (known, mayExist, settled bool)

// settleWindow is how long a cleaner keeps checking, after the master first
// answered, for a key whose creating command may still be queued. A stalled
// master runs what sat in its sockets (including connections still in its
// accept backlog) within its first event-loop turns after it resumes.
const settleWindow = time.Second

// cleanEntry is one key a cleaner must remove from its master.
type cleanEntry struct {
	key, value string
	fate       fate
	notBefore  time.Time // first check; by then the original answer has usually come
	horizon    time.Time // give up (the key expires by its TTL) after this
	firstZero  time.Time // when the master first answered "not there"
	// settledAtSend is the fate's settled flag as it was before the delete
	// now in flight was sent. Only then does a "0" answer prove that nothing
	// is left: a command settled later may have run after the delete.
	settledAtSend bool
}

// cleaner removes, in the background, the keys that failed attempts and
// unanswered releases may have left on one master. One goroutine per master
// at most, and one round trip per tick for all its keys, however many
// attempts failed: a stalled master costs bounded work.
type cleaner struct {
	c *Client
	m *master

	mu      sync.Mutex
	pending map[[2]string]*cleanEntry
	running bool
	kick    chan struct{}
}

func newCleaner(c *Client, m *master) *cleaner {
	return &cleaner{c: c, m: m, pending: make(map[[2]string]*cleanEntry), kick: make(chan struct{}, 1)}
}

// add schedules key (holding value) for removal, checked first after delay:
// an answer still on its way then makes the check unnecessary.
func (cl *cleaner) add(key, value string, f fate, delay time.Duration, horizon time.Time) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	notBefore := cl.c.cfg.clock.Now().Add(delay)
	cl.pending[[2]string{key, value}] = &cleanEntry{key: key, value: value, fate: f, notBefore: notBefore, horizon: horizon}
	select {
	case cl.kick <- struct{}{}:
	default:
	}
	if !cl.running {
		cl.running = cl.c.goBackground(cl.run)
	}
}

// maxCleanBatch bounds the keys one cleanup script handles.
const maxCleanBatch = 256

func (cl *cleaner) run() {
	wait := 10 * time.Millisecond
	for {
		batch, next := cl.due()
		if batch == nil && next.IsZero() {
			return
		}
		if len(batch) == 0 { // nothing due yet
			if !cl.sleep(next.Sub(cl.c.cfg.clock.Now())) {
				return
			}
			continue
		}
		keys, values := make([]string, len(batch)), make([]string, len(batch))
		for i, e := range batch {
			keys[i], values[i] = e.key, e.value
		}
		timeout := cl.c.masterTimeout(0)
		r := startRound(context.Background(), cl.c, []int{cl.m.index}, timeout,
			func(ctx context.Context, m *master) ([]int64, error) {
				return releaseBatch(ctx, m, keys, values, false)
			})
		rep, ok, _ := r.next(context.Background())
		r.stop()
		cl.settle(batch, rep.val, ok && rep.err == nil)
		if !cl.sleep(wait) {
			return
		}
		wait = min(wait*2, time.Second)
	}
}

// sleep waits d, or less when new work is added; false when the client closes.
func (cl *cleaner) sleep(d time.Duration) bool {
	t := cl.c.cfg.clock.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	select {
	case <-cl.c.closing:
		return false
	case <-cl.kick:
	case <-t.C():
	}
	return true
}

// due drops what needs no more work and returns up to maxCleanBatch entries
// to check now, and when the next entry not yet due becomes due. Both are
// empty (and the worker stops) when nothing is pending.
func (cl *cleaner) due() (batch []*cleanEntry, next time.Time) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	now := cl.c.cfg.clock.Now()
	for k, e := range cl.pending {
		known, mayExist, settled := e.fate()
		if known && !mayExist {
			delete(cl.pending, k)
			continue
		}
		if !now.Before(e.horizon) {
			cl.c.cfg.logger.Warn("redlock: gave up removing a key; it expires by its TTL", "key", e.key, "master", cl.m.addr)
			delete(cl.pending, k)
			continue
		}
		if now.Before(e.notBefore) {
			if next.IsZero() || e.notBefore.Before(next) {
				next = e.notBefore
			}
			continue
		}
		if len(batch) < maxCleanBatch {
			e.settledAtSend = settled
			batch = append(batch, e)
		}
	}
	if len(cl.pending) == 0 {
		cl.running = false
	}
	return batch, next
}

// settle applies the master's answers to batch.
func (cl *cleaner) settle(batch []*cleanEntry, deleted []int64, answered bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	now := cl.c.cfg.clock.Now()
	for i, e := range batch {
		k := [2]string{e.key, e.value}
		if !answered {
			e.firstZero = time.Time{} // the master stalled again: start over
			continue
		}
		if deleted[i] == 1 {
			delete(cl.pending, k)
			continue
		}
		if e.firstZero.IsZero() {
			e.firstZero = now
		}
		if e.settledAtSend || now.Sub(e.firstZero) >= settleWindow {
			delete(cl.pending, k)
		}
	}
}

// cleanupAttempt removes what a failed attempt may have left. The masters
// that granted are live: the owner-checked delete is sent to them at once and
// waited for (up to the per-master timeout), so that the next attempt, ours
// or a contender's, does not trip over our keys. Every master whose answer is
// unknown, and any granting master that did not confirm, is handed to its
// cleaner in the background. Masters that answered "held by another owner",
// or whose command provably was not applied, need nothing.
func (c *Client) cleanupAttempt(key, value string, ttl time.Duration, start time.Time, r *round[grant]) {
	horizon := start.Add(max(c.cfg.cleanupHorizon, ttl))
	var granted []int
	for i := range r.done {
		f := acquireFate(r, i)
		known, mayExist, settled := f()
		switch {
		case known && !mayExist:
		case known && settled:
			granted = append(granted, i)
		default: // the answer is still on its way, or was a transport error
			c.finishLater(key, value, i, r.done[i], f, c.masterTimeout(ttl), horizon)
		}
	}
	if len(granted) == 0 {
		return
	}
	rr := startRound(context.Background(), c, granted, c.masterTimeout(ttl), sendRelease(key, value, false))
	for {
		rep, ok, _ := rr.next(context.Background())
		if !ok {
			break
		}
		if rep.err != nil {
			c.cleaners[rep.master].add(key, value, acquireFate(r, rep.master), 0, horizon)
		}
	}
	rr.stop()
	for _, i := range rr.unanswered() {
		c.cleaners[i].add(key, value, acquireFate(r, i), 0, horizon)
	}
}

// finishLater waits (up to timeout) for the answer that decides whether
// key may be left on master i, and acts on it at once: nothing to do, one
// owner-checked delete, or, when the answer does not come or does not
// settle it, the master's cleaner. Waiting for the answer instead of
// checking after a fixed delay matters: under contention a key left behind
// by a split vote blocks every contender until it is gone.
func (c *Client) finishLater(key, value string, i int, done <-chan struct{}, f fate, timeout time.Duration, horizon time.Time) {
	c.goBackground(func() {
		t := c.cfg.clock.NewTimer(timeout)
		select {
		case <-done:
			t.Stop()
		case <-t.C():
		case <-c.closing:
			t.Stop()
			return
		}
		known, mayExist, settled := f()
		if known && !mayExist {
			return
		}
		if known && settled {
			r := startRound(context.Background(), c, []int{i}, timeout, sendRelease(key, value, false))
			rep, ok, _ := r.next(context.Background())
			r.stop()
			if ok && rep.err == nil {
				return // deleted, or not there: the SET was answered, nothing can appear any more
			}
		}
		c.cleaners[i].add(key, value, f, 0, horizon)
	})
}

// acquireFate reads master i's answer to round 1 of an attempt.
func acquireFate(r *round[grant], i int) fate {
	return func() (bool, bool, bool) {
		select {
		case <-r.done[i]:
			rep := *r.final[i]
			switch {
			case rep.err == nil:
				return true, rep.val.granted, true
			case notSent(rep.err):
				return true, false, true
			case isAnswer(rep.err):
				return true, true, true // one owner-checked delete settles it
			default:
				return true, true, false // a transport error: the SET may still be applied
			}
		default:
			return false, true, false
		}
	}
}

func isUnknownCommand(err error) bool {
	return strings.Contains(strings.ToLower(err.Error()), "unknown command")
}
