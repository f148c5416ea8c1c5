package redlock

import (
	"sync"

	"github.com/quorumlock/quorumlock/fencing"
)

// tokenCache remembers, per fence bucket, the highest fencing token or
// counter this Client has seen, so that round 1 can propose the next token
// (the one-round fast path, docs/fencing.md). It is only a hint: a stale
// entry makes the proposal too low and the attempt falls back to the
// write-back round. It holds one entry per bucket at most.
type tokenCache struct {
	mu   sync.Mutex
	seen map[int]fencing.Token
}

func newTokenCache() *tokenCache { return &tokenCache{seen: make(map[int]fencing.Token)} }

// proposal is the token to propose for a key of bucket b: one above the
// highest seen, and 1 for a bucket this Client has not seen (where the
// bucket's counters are ahead, no master raises and the attempt falls back
// to the write-back, learning them). 0 (no proposal) only when the counter
// is exhausted.
func (tc *tokenCache) proposal(b int) fencing.Token {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	t := tc.seen[b]
	if t >= fencing.MaxToken {
		return 0
	}
	return t + 1
}

// note records that bucket b's counter or a token of it reached t.
func (tc *tokenCache) note(b int, t fencing.Token) {
	if t == 0 {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	tc.seen[b] = max(tc.seen[b], t)
}
