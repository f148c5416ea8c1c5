package redlock

import (
	"context"
	"testing"
	"time"
)

// A client whose token cache is stale wins a free key on q masters of
// which only q−1 missed the newer tokens: those q−1 raise their counters
// to its proposal, the one that saw the newer tokens grants without
// raising. q−1 raises are no majority: the token must come from the
// write-back, above every earlier token. (The fast path counting q−1
// masters, the suite's mutant fastpath-q-1, hands out the stale proposal,
// below the newest token.) Keys set by hand stand for what the suite's
// cuts do: they refuse a master to one client, so nothing is raised there.
// Each lock takes a key of its own in one fence bucket (one counter): a
// TryLock returns at a quorum, so the last master's SET of a lock may land
// after its release's delete and stand until the cleaner's second look,
// which must not refuse the next lock of the same key.
func TestStaleCacheWinsWithQMinusOneRaisesGetsAHigherToken(t *testing.T) {
	r := newRig(t, 5) // q = 3
	stale, other := r.client(t), r.client(t)
	ctx := context.Background()
	const ttl = 10 * time.Second
	ks := sameBucket("stale", 4)
	lock := func(c *Client, key, what string) uint64 {
		t.Helper()
		l, err := c.TryLock(ctx, key, ttl)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		return uint64(l.Token())
	}
	block := func(key string, idx ...int) {
		for _, i := range idx {
			if err := r.clients[i].Set(ctx, key, "another owner", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t0 := lock(stale, ks[0], "the stale client's lock: its cache learns the token")
	newest := t0
	for k, key := range ks[1:3] {
		block(key, 3, 4) // behind: 3 and 4 miss the newer tokens
		newest = lock(other, key, "another client on masters 0, 1, 2")
		if newest <= t0 {
			t.Fatalf("lock %d of the other client: token %d after %d", k, newest, t0)
		}
	}
	block(ks[3], 0, 1) // the stale client wins on 2 (newer counter) and 3, 4 (behind)
	l, err := stale.TryLock(ctx, ks[3], ttl)
	if err != nil {
		t.Fatalf("the stale client on masters 2, 3, 4: %v", err)
	}
	defer func() { _ = l.Release(ctx) }()
	if got := uint64(l.Token()); got <= newest {
		t.Fatalf("the stale client's token %d after %d (its cache said %d): the fast path took q−1 raises", got, newest, t0)
	}
}
