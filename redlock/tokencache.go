package redlock

import (
	"sync"

	"github.com/quorumlock/quorumlock/fencing"
)

// maxCachedTokens bounds the per-key token cache of a Client.
const maxCachedTokens = 4096

// tokenCache remembers, per key, the highest fencing token or counter this
// Client has seen, so that round 1 can propose the next token (the one-round
// fast path, docs/fencing.md). It is only a hint: a stale entry makes the
// proposal too low and the attempt falls back to the write-back round. At
// most maxCachedTokens keys are kept; past that an arbitrary one is dropped.
type tokenCache struct {
	mu   sync.Mutex
	seen map[string]fencing.Token
}

func newTokenCache() *tokenCache { return &tokenCache{seen: make(map[string]fencing.Token)} }

// proposal is the token to propose for key: one above the highest seen,
// and 1 for a key this Client has not seen (right for a key nobody has
// locked yet, the common case of fresh per-entity keys; where the key's
// counters are ahead, no master raises and the attempt falls back to the
// write-back, learning them). 0 (no proposal) only when the counter is
// exhausted.
func (tc *tokenCache) proposal(key string) fencing.Token {
	tc.mu.Lock()
	defer tc.mu.Unlock()
	t := tc.seen[key]
	if t >= fencing.MaxToken {
		return 0
	}
	return t + 1
}

// note records that key's counter or token reached t.
func (tc *tokenCache) note(key string, t fencing.Token) {
	if t == 0 {
		return
	}
	tc.mu.Lock()
	defer tc.mu.Unlock()
	makeRoom(tc.seen, key, maxCachedTokens)
	tc.seen[key] = max(tc.seen[key], t)
}
