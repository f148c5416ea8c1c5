package redlock

import (
	"slices"
	"sync"
	"sync/atomic"
	"time"
)

// Hand-off of a hot key inside one Client. An owner change costs two
// sequential rounds: the release's delete, then the next head's acquire,
// which goes out only once the release's PUBLISH woke it. When the head of
// the key's line waits for a lease of its own Client (and the masters saw no
// other client waiting), it parks here, during its refused attempt as well
// as after it (a short hold ends before that attempt's answers). The
// release gives it its deletes before sending them, and the head's next
// attempt sends each master's delete and its acquire as one pipeline, the
// delete first: the acquire runs right behind the delete instead of a round
// trip later (docs/performance.md).
//
// Safety does not rest on the order: the acquire is an ordinary attempt,
// counted by the same rules, that a master still holding the key refuses
// (the head then waits for the release's PUBLISH, as without the hand-off;
// its wake channel was taken before the attempt). The release never waits
// for the head: when the head has not sent the deletes within handoffGrace,
// the release sends them itself, and the head's acquire follows alone.

// handoffGrace bounds how long a release's deletes wait for the head: a
// head blocked before its round (a restart pass, say) must not hold the
// release back.
const handoffGrace = 2 * time.Millisecond

// relay is a release's deletes, not yet sent, by master index (nil where
// nothing is to be queued). Exactly one of the head and the release's
// fallback takes them, and whoever does sends them.
type relay struct {
	dels  []*queued
	taken atomic.Bool
}

// take returns the deletes to its caller, once; nil to every later caller
// and for a nil relay.
func (rl *relay) take() []*queued {
	if rl == nil || !rl.taken.CompareAndSwap(false, true) {
		return nil
	}
	return rl.dels
}

// flush sends the deletes alone unless somebody took them already.
func (rl *relay) flush(c *Client) {
	if dels := rl.take(); dels != nil {
		c.submit(dels)
	}
}

// chain puts each master's delete in front of the acquire to the same
// master, and returns what to submit: dels are the release's calls (from
// take, may be nil), acq the acquire's. A delete whose master gets no
// acquire goes alone.
func chain(dels, acq []*queued) []*queued {
	if dels == nil {
		return acq
	}
	for i, d := range dels {
		if d == nil {
			continue
		}
		if acq[i] != nil {
			d.then = acq[i]
		}
		acq[i] = d
	}
	return acq
}

// handoffs holds, per key, the head of the key's line parked in Lock's wait
// and ready to take a release's deletes.
type handoffs struct {
	mu     sync.Mutex
	parked map[string]*parked
}

type parked struct {
	given chan struct{} // closed when a release gave rl
	rl    *relay        // guarded by handoffs.mu
}

func newHandoffs() *handoffs { return &handoffs{parked: make(map[string]*parked)} }

// park registers the caller, the head of key's line, as ready for a
// hand-off; nil when another is parked for key (not expected: one head per
// key). The caller must call leave once it stops waiting.
func (h *handoffs) park(key string) *parked {
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parked[key] != nil {
		return nil
	}
	p := &parked{given: make(chan struct{})}
	h.parked[key] = p
	return p
}

// leave unregisters p and returns the relay a release gave it meanwhile,
// if any: the caller sends it with its next attempt or flushes it.
func (h *handoffs) leave(key string, p *parked) *relay {
	if p == nil {
		return nil
	}
	h.mu.Lock()
	defer h.mu.Unlock()
	if h.parked[key] == p {
		delete(h.parked, key)
	}
	return p.rl
}

// waiting reports whether a head is parked for key now.
func (h *handoffs) waiting(key string) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.parked[key] != nil
}

// give hands rl to the head parked for key, if any, and reports whether it
// did. The caller then sends rl only through a fallback after handoffGrace.
func (h *handoffs) give(key string, rl *relay) bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	p := h.parked[key]
	if p == nil {
		return false
	}
	delete(h.parked, key)
	p.rl = rl
	close(p.given)
	return true
}

// handOffDeletes gives a release's deletes to the head parked for key, if
// there is one, to send in front of its acquire, and reports whether it did;
// the head has handoffGrace to take them, after which they go alone. When
// it reports false, nothing was sent: the caller submits the deletes.
func (c *Client) handOffDeletes(key string, dels []*queued) bool {
	rl := &relay{dels: dels}
	if !slices.ContainsFunc(dels, func(q *queued) bool { return q != nil }) || !c.handoffs.give(key, rl) {
		return false
	}
	time.AfterFunc(handoffGrace, func() { rl.flush(c) })
	return true
}
