package checker

import (
	"fmt"
	"sort"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// tokenGrant is one lock acquire's ok that carried a token.
type tokenGrant struct {
	invoke, ok history.Event
}

// repeatedTokens finds tokens handed out twice within one fence bucket
// (docs/fencing.md, "Tokens within a bucket"): every lock acquire's ok with
// a token, whether or not its hold had validity left, grouped by the bucket
// its key's oks record ("n/B"), or by the key when none does. Two oks of one
// group with one token break the guarantee whichever came first and whether
// or not their holds overlapped. It returns one line per repeat, the proof
// of the first (both acquires' invokes and oks), and how many groups were
// recorded with a bucket.
func repeatedTokens(events []history.Event) (found []string, proof []history.Event, buckets int) {
	bucketOf := make(map[string]string) // key → its bucket, from any ok recording one
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.OK && e.Bucket != "" {
			bucketOf[e.Key] = e.Bucket
		}
	}
	groups := make(map[string]map[uint64]tokenGrant)
	acquireOKs(events, func(inv, e history.Event) {
		if e.Token == 0 {
			return
		}
		if limit, _ := inv.Limit(); limit != 0 {
			return // a semaphore's tokens grow per slot
		}
		group := "key " + fmt.Sprintf("%q", e.Key)
		if b, ok := bucketOf[e.Key]; ok {
			group = "fence bucket " + b
		}
		if groups[group] == nil {
			groups[group] = make(map[uint64]tokenGrant)
		}
		g := tokenGrant{invoke: inv, ok: e}
		first, seen := groups[group][e.Token]
		if !seen {
			groups[group][e.Token] = g
			return
		}
		found = append(found, fmt.Sprintf("%s: token %d handed out twice, to process %d on key %q (#%d) and to process %d on key %q (#%d)",
			group, e.Token, first.ok.Process, first.ok.Key, first.ok.Index, e.Process, e.Key, e.Index))
		if proof == nil {
			proof = []history.Event{first.invoke, first.ok, inv, e}
			sort.SliceStable(proof, func(i, j int) bool { return proof[i].Index < proof[j].Index })
		}
	})
	for g := range groups {
		if strings.HasPrefix(g, "fence bucket ") {
			buckets++
		}
	}
	return found, proof, buckets
}
