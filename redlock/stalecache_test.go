package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A client whose token cache is stale wins a free key on q masters of
// which only q−1 missed the newer tokens: those q−1 raise their counters
// to its proposal, the one that saw the newer tokens grants without
// raising. q−1 raises are no majority: the token must come from the
// write-back, above every earlier token. (The fast path counting q−1
// masters, the suite's mutant fastpath-q-1, hands out the stale proposal,
// below the newest token.) Keys set by hand stand for what the suite's
// cuts do: they refuse a master to one client, so nothing is raised there.
func TestStaleCacheWinsWithQMinusOneRaisesGetsAHigherToken(t *testing.T) {
	r := newRig(t, 5) // q = 3
	stale, other := r.client(t), r.client(t)
	ctx := context.Background()
	const ttl = 10 * time.Second
	lock := func(c *Client, free []int, what string) uint64 {
		t.Helper()
		l, err := c.TryLock(ctx, "k", ttl)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		var masters []redis.UniversalClient
		for _, i := range free {
			masters = append(masters, r.clients[i])
		}
		gone(t, masters, "k")
		return uint64(l.Token())
	}
	block := func(idx ...int) {
		for _, i := range idx {
			if err := r.clients[i].Set(ctx, "k", "another owner", time.Minute).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	unblock := func(idx ...int) {
		for _, i := range idx {
			if err := r.clients[i].Del(ctx, "k").Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	t0 := lock(stale, []int{0, 1, 2, 3, 4}, "the stale client's lock: its cache learns the token")
	block(3, 4) // behind: 3 and 4 miss the newer tokens
	newest := t0
	for k := range 2 {
		newest = lock(other, []int{0, 1, 2}, "another client on masters 0, 1, 2")
		if newest <= t0 {
			t.Fatalf("lock %d of the other client: token %d after %d", k, newest, t0)
		}
	}
	unblock(3, 4)
	block(0, 1) // the stale client wins on 2 (newer counter) and 3, 4 (behind)
	l, err := stale.TryLock(ctx, "k", ttl)
	if err != nil {
		t.Fatalf("the stale client on masters 2, 3, 4: %v", err)
	}
	defer func() { _ = l.Release(ctx) }()
	if got := uint64(l.Token()); got <= newest {
		t.Fatalf("the stale client's token %d after %d (its cache said %d): the fast path took q−1 raises", got, newest, t0)
	}
}
