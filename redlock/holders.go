package redlock

import (
	"hash/maphash"
	"sync"
)

// localHolders counts, per key, the leases this Client holds now. A Lock
// waiter refused while one of them held its key knows that the release will
// come from this process, where the per-key line already keeps the waiters
// apart: it need not delay its next attempt to spread a herd (lock.go).
// Sharded, so that many goroutines taking distinct keys do not queue on one
// mutex.
type localHolders struct {
	seed   maphash.Seed
	shards [16]holderShard
}

type holderShard struct {
	mu sync.Mutex
	n  map[string]int
}

func newLocalHolders() *localHolders {
	h := &localHolders{seed: maphash.MakeSeed()}
	for i := range h.shards {
		h.shards[i].n = make(map[string]int)
	}
	return h
}

func (h *localHolders) shard(key string) *holderShard {
	return &h.shards[maphash.String(h.seed, key)%uint64(len(h.shards))]
}

// maxHoldersPerShard bounds the keys a shard remembers: a lease that is
// never released, checked or waited on never ends, and its entry must not
// stay forever. An evicted entry only costs a waiter its anti-herd delay.
const maxHoldersPerShard = 256

// add records a lease of key handed out.
func (h *localHolders) add(key string) {
	s := h.shard(key)
	s.mu.Lock()
	makeRoom(s.n, key, maxHoldersPerShard)
	s.n[key]++
	s.mu.Unlock()
}

// remove records that a lease of key ended.
func (h *localHolders) remove(key string) {
	s := h.shard(key)
	s.mu.Lock()
	if s.n[key] <= 1 {
		delete(s.n, key)
	} else {
		s.n[key]--
	}
	s.mu.Unlock()
}

// holds reports whether a lease of key handed out by this Client has not
// ended yet.
func (h *localHolders) holds(key string) bool {
	s := h.shard(key)
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.n[key] > 0
}
