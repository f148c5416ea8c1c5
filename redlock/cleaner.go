package redlock

import (
	"container/heap"
	"context"
	"sync"
	"time"
)

// settleWindow is how long a cleaner keeps checking, after the master first
// answered, for a key whose creating command may still be queued. A stalled
// master runs what sat in its sockets (including connections still in its
// accept backlog) within its first event-loop turns after it resumes.
const settleWindow = time.Second

// maxPendingCleanups bounds what one master's cleaner remembers. A stalled
// master and a caller retrying TryLock add one entry per failed attempt;
// past the bound, new entries are dropped with a warning and their keys
// expire by their TTL. An entry is a few hundred bytes: the bound is about
// 2 MB per master.
const maxPendingCleanups = 8192

// maxCleanBatch bounds the keys one cleanup round trip handles.
const maxCleanBatch = 256

// cleanEntry is one key a cleaner must remove from its master. It keeps
// only the per-master source of its fate, not the round it came from.
type cleanEntry struct {
	key, value string
	src        source
	due        time.Time // next check
	horizon    time.Time // give up (the key expires by its TTL) after this
	firstZero  time.Time // when the master first answered "not there"
	backoff    time.Duration
	// settledAtSend is whether the source was settled before the delete now
	// in flight was sent. Only then does a "not there" prove that nothing is
	// left: a command settled later may have run after the delete.
	settledAtSend bool
	index         int // in the heap
}

// dueHeap orders entries by their next check.
type dueHeap []*cleanEntry

func (h dueHeap) Len() int           { return len(h) }
func (h dueHeap) Less(i, j int) bool { return h[i].due.Before(h[j].due) }
func (h dueHeap) Swap(i, j int) {
	h[i], h[j] = h[j], h[i]
	h[i].index, h[j].index = i, j
}
func (h *dueHeap) Push(x any) {
	e := x.(*cleanEntry)
	e.index = len(*h)
	*h = append(*h, e)
}
func (h *dueHeap) Pop() any {
	old := *h
	e := old[len(old)-1]
	old[len(old)-1] = nil
	*h = old[:len(old)-1]
	return e
}

// cleaner removes, in the background, the keys that failed attempts and
// unanswered releases may have left on one master. One goroutine per master
// at most, one round trip per batch of due keys however many attempts
// failed, and each tick looks only at the entries that are due: a stalled
// master costs bounded memory and work.
type cleaner struct {
	c *Client
	m *master

	mu      sync.Mutex
	pending dueHeap
	limit   int // maxPendingCleanups, lowered by tests
	out     int // entries of the batch on its way to the master
	dropped int
	rounds  int // round trips begun (tests)
	running bool
	kick    chan struct{}
}

func newCleaner(c *Client, m *master) *cleaner {
	return &cleaner{c: c, m: m, limit: maxPendingCleanups, kick: make(chan struct{}, 1)}
}

// add schedules key (holding value) for removal, checked first at once.
func (cl *cleaner) add(key, value string, src source, horizon time.Time) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	if len(cl.pending)+cl.out >= cl.limit {
		cl.dropped++
		if cl.dropped == 1 || cl.dropped%1000 == 0 {
			cl.c.cfg.logger.Warn("redlock: cleanup queue full; keys left to expire by their TTL", "master", cl.m.addr, "dropped", cl.dropped)
		}
		return
	}
	heap.Push(&cl.pending, &cleanEntry{key: key, value: value, src: src, due: cl.c.cfg.clock.Now(), horizon: horizon, backoff: minBackoff})
	select {
	case cl.kick <- struct{}{}:
	default:
	}
	if !cl.running {
		cl.running = cl.c.spawn(cl.run)
	}
}

// pendingCount is the number of keys waiting for cleanup (tests).
func (cl *cleaner) pendingCount() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return len(cl.pending) + cl.out
}

// roundCount is the number of round trips begun (tests).
func (cl *cleaner) roundCount() int {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	return cl.rounds
}

// Each entry's checks back off from minBackoff, doubling up to maxBackoff.
// So do the cleaner's round trips to a master that did not answer the last
// one (a stalled or unreachable master): the cleaner pauses between them,
// whatever is due or added meanwhile. Without that pause every due batch
// would go out at once, fail as busy, and go back into the heap: with a
// stalled master and thousands of entries, a tenth of the client's CPU
// (docs/performance.md, "A stalled master's cleanup").
const (
	minBackoff = 10 * time.Millisecond
	maxBackoff = time.Second
)

// nextBackoff is the wait after d: minBackoff after none, else twice d, at
// most maxBackoff.
func nextBackoff(d time.Duration) time.Duration { return min(max(2*d, minBackoff), maxBackoff) }

func (cl *cleaner) run() {
	var pause time.Duration // zero while the master answers
	for {
		batch, next, ok := cl.due()
		if !ok {
			return
		}
		if len(batch) == 0 {
			if !cl.sleep(next.Sub(cl.c.cfg.clock.Now()), true) {
				return
			}
			continue
		}
		keys, values := make([]string, len(batch)), make([]string, len(batch))
		for i, e := range batch {
			keys[i], values[i] = e.key, e.value
		}
		r := startRound(context.Background(), cl.c, []int{cl.m.index}, cl.c.masterTimeout(0),
			func(m *master) request[[]int64] { return releaseEach(m, keys, values) })
		var answer []int64
		r.await(func(_ int, rep reply[[]int64]) (outcome, error) {
			answer = rep.val
			return yes, nil
		})
		answered := cl.settle(batch, answer)
		if cl.c.closed() {
			return
		}
		if answered {
			pause = 0
			continue
		}
		pause = nextBackoff(pause)
		if !cl.sleep(pause, false) {
			return
		}
	}
}

// sleep waits d, or, when kickable, less when new work is added; false when
// the client closes.
func (cl *cleaner) sleep(d time.Duration, kickable bool) bool {
	t := cl.c.cfg.clock.NewTimer(max(d, time.Millisecond))
	defer t.Stop()
	kick := cl.kick
	if !kickable {
		kick = nil
	}
	select {
	case <-cl.c.closing():
		return false
	case <-kick:
	case <-t.C():
	}
	return true
}

// due pops the entries due now (up to maxCleanBatch), dropping those that
// need no more work, and says when the next one is due. ok is false (and the
// worker stops) when nothing is pending.
func (cl *cleaner) due() (batch []*cleanEntry, next time.Time, ok bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	now := cl.c.cfg.clock.Now()
	for len(cl.pending) > 0 && len(batch) < maxCleanBatch {
		e := cl.pending[0]
		if now.Before(e.due) {
			next = e.due
			break
		}
		heap.Pop(&cl.pending)
		o := e.src.fate()
		switch {
		case !o.mayHoldOurKey():
			continue
		case !now.Before(e.horizon):
			cl.c.cfg.logger.Warn("redlock: gave up removing a key; it expires by its TTL", "key", e.key, "master", cl.m.addr)
			continue
		}
		e.settledAtSend = o.settled()
		batch = append(batch, e)
	}
	cl.out = len(batch)
	if len(batch) > 0 {
		cl.rounds++
	}
	if len(cl.pending) == 0 && len(batch) == 0 {
		cl.running = false
		return nil, time.Time{}, false
	}
	return batch, next, true
}

// settle applies the master's answers to batch (nil: it did not answer) and
// schedules what still needs a check, backing off per entry; it reports
// whether the master answered.
func (cl *cleaner) settle(batch []*cleanEntry, deleted []int64) (answered bool) {
	cl.mu.Lock()
	defer cl.mu.Unlock()
	cl.out = 0
	now := cl.c.cfg.clock.Now()
	answered = len(deleted) == len(batch)
	for i, e := range batch {
		switch {
		case !answered || deleted[i] == keyErred:
			e.firstZero = time.Time{} // the master stalled again (or this key erred): start over
		case deleted[i] == 1:
			continue
		default:
			if e.firstZero.IsZero() {
				e.firstZero = now
			}
			if e.settledAtSend || now.Sub(e.firstZero) >= settleWindow {
				continue
			}
		}
		e.due = now.Add(e.backoff)
		e.backoff = nextBackoff(e.backoff)
		heap.Push(&cl.pending, e)
	}
	return answered
}
