package checker

import (
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// sentBound checks a lock hold against the moment its winning attempt's
// first command left for a master (the ok's sent_ns, recorded by the
// suite's go-redis hook) when the invoke recorded ttl_ns: the attempt's
// validity counts from a moment before that send, so the ok's
// valid_until_ns may be at most sent_ns + TTL − drift allowance. A later
// deadline counts validity from later than the round's start (from the end
// of the round, say), whatever the library says of itself. It returns the
// finding, or "" when the hold keeps the bound or carries no sent_ns.
func (m Mutex) sentBound(h Hold) string {
	ok, ttl := h.Proof[0], h.Invoke.TTLNS
	if ok.SentNS == 0 || ttl <= 0 {
		return ""
	}
	allowance := m.Allowance(time.Duration(ttl))
	bound := ok.SentNS + ttl - int64(allowance)
	if ok.ValidUntilNS <= bound {
		return ""
	}
	return fmt.Sprintf("key %q: process %d's lease (#%d, TTL %v asked at #%d) is valid until %.6fs, past its round's first send (%.6fs) + TTL − drift allowance %v = %.6fs",
		h.Key, h.Process, ok.Index, time.Duration(ttl), h.Invoke.Index, sec(ok.ValidUntilNS), sec(ok.SentNS), allowance, sec(bound))
}

// sentBoundProof is the proof of a sentBound finding.
func sentBoundProof(h Hold) []history.Event { return []history.Event{h.Invoke, h.Proof[0]} }
