package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Two keys of one fence bucket (shared:96 and shared:140 both hash to 141 of
// 1024) taken in turn by two clients: each key's tokens grow strictly, and the
// bucket's counter only grows, whoever took which key.
func TestKeysSharingABucketKeepGrowingTokens(t *testing.T) {
	if keys.BucketOf("shared:96", DefaultFenceBuckets) != keys.BucketOf("shared:140", DefaultFenceBuckets) {
		t.Fatal("the two keys no longer share a bucket: pick another pair")
	}
	r := newRig(t, 5)
	ctx := context.Background()
	a, b := r.client(t), r.client(t)
	last := map[string]fencing.Token{}
	for i := range 20 {
		c, key := a, "shared:96"
		if i%3 == 1 {
			c = b
		}
		if i%2 == 1 {
			key = "shared:140"
		}
		l, err := c.TryLock(ctx, key, 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if l.Token() <= last[key] {
			t.Fatalf("lock %d of %s: token %d after %d", i, key, l.Token(), last[key])
		}
		last[key] = l.Token()
		_ = l.Release(ctx)
	}
	if n := countKeys(t, r.clients[0], keys.BucketPrefix+"*"); n > 2 { // warm-up aside, one bucket
		t.Fatalf("%d bucket counters on master 0 for two keys of one bucket", n)
	}
}

// Masters that already hold per-key counters of an earlier version (and its
// markers) keep working: the first token of a key is above its old counter,
// the old counter is folded into the bucket when the masters are certified,
// and no token goes back.
func TestUpgradeFromPerKeyCountersNeverGoesBack(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	for i, m := range r.clients {
		if err := m.Set(ctx, keys.OldEpoch, "old-marker", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if err := m.Set(ctx, keys.OldSynced, "old-run-id", 0).Err(); err != nil {
			t.Fatal(err)
		}
		if i < 3 { // written back to a majority by the earlier version
			if err := m.Set(ctx, keys.Legacy("invoice:7"), "41", 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	cl, err := New(r.clients, WithQuarantine(500*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l, err := cl.TryLock(ctx, "invoice:7", time.Second) // every master grants: counts although uncertified
	if err != nil {
		t.Fatalf("first lock after the upgrade: %v", err)
	}
	if l.Token() <= 41 {
		t.Fatalf("first token after the upgrade %d; want above the old counter 41", l.Token())
	}
	first := l.Token()
	_ = l.Release(ctx)
	eventually(t, 15*time.Second, "every master certified (its old counters folded in)", func() bool {
		if l, err := cl.TryLock(ctx, "other", time.Second); err == nil {
			_ = l.Release(ctx)
		}
		for _, h := range cl.Health() {
			if h.Quarantined {
				return false
			}
		}
		return true
	})
	pause(t, r, 0, 1) // the next lock counts 2, 3 and 4, which had no old counter
	defer resume(t, r, 0, 1)
	l, err = cl.TryLock(ctx, "invoice:7", time.Second)
	if err != nil {
		t.Fatalf("lock after the upgrade with masters 0 and 1 paused: %v", err)
	}
	defer l.Release(ctx)
	if l.Token() <= first {
		t.Fatalf("token %d after the masters were certified; want above %d", l.Token(), first)
	}
	if got := bucketCounter(t, r.clients[4], "invoice:7"); got < 41 {
		t.Fatalf("master 4's bucket %d: the old counter was not folded in", got)
	}
}

// Every client of the same masters must use the same number of buckets: an
// acquire with another is refused by every master, naming both, and changes
// nothing; New refuses a bucket count out of range.
func TestFenceBucketCountsMustAgree(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	l, err := r.client(t).TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	gone(t, r.clients, "k") // a key left by the release would make the check below meaningless
	_, err = r.client(t, WithFenceBuckets(64)).TryLock(ctx, "k", time.Second)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrReplyError) || !strings.Contains(err.Error(), "the masters use 1024 fence buckets, this client 64") {
		t.Fatalf("TryLock with another bucket count: %v; want refused naming both counts", err)
	}
	if vals := r.values(t, "k"); countNonEmpty(vals) != 0 {
		t.Fatalf("a refused acquire left its key: %v", vals)
	}
	for _, n := range []int{0, -1, 1 << 17} {
		if _, err := New(r.clients, WithFenceBuckets(n)); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("WithFenceBuckets(%d): %v; want ErrInvalidArgument", n, err)
		}
	}
}
