package redlock

import (
	"sync"

	"github.com/quorumlock/quorumlock/fencing"
)

// tokenCache remembers the highest fencing token or counter this Client has
// seen, over every bucket, so that round 1 can propose the next token (the
// one-round fast path, docs/fencing.md). It is only a hint: a proposal below
// a bucket's counter (another client raised it further) makes no master
// raise, and the attempt falls back to the write-back round, learning it; a
// proposal above a counter only makes the key's tokens skip values. One
// value for every bucket keeps every counter this Client saw below its next
// proposal, so a key of a bucket it never used takes the fast path too.
type tokenCache struct {
	mu   sync.Mutex
	high fencing.Token
}

func newTokenCache() *tokenCache { return &tokenCache{} }

// proposal is the token to propose: one above the highest seen, 0 (no
// proposal) only when the counter is exhausted.
func (tc *tokenCache) proposal() fencing.Token {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	if tc.high >= fencing.MaxToken {
		return 0
	}
	return tc.high + 1
}

// note records that a counter or token reached t.
func (tc *tokenCache) note(t fencing.Token) {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.high = max(tc.high, t)
}
