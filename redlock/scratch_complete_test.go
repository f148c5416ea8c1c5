package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/restart"
)

// Rule SC completes a master's scratch only on a certificate of the same
// scratch, which proves that scratch passed its checks. A scratch that
// stopped leaves its guards behind, naming the lineage of masters that may
// have just lost their data. Here masters 0 and 1 are flushed and synced
// again; A locks k on {2, 3, 4}; masters 2 and 3 are flushed (never more
// than two damaged at once); a scratch of {0, 1, 2, 3}, whose probes found
// each record-free at its own instant, writes its guards and stops at step
// 2 (0 and 1 carry certificates). B, meeting the masters now, must not
// count 2 and 3: certificates of other origins (0 and 1's syncs, 4's first
// scratch) say nothing about the stopped scratch, and completing on them
// gives B k on {0, 1, 2, 3} beside A.
func TestGuardsOfAStoppedScratchAreNotCompleted(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified(WithQuarantine(30*time.Second)))
	member := func(i int) restart.Member { return restart.Member{Index: i, RDB: r.clients[i]} }
	flush := func(idx ...int) {
		for _, i := range idx {
			if err := r.clients[i].FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	flush(0, 1)
	src := restart.Sources{Masters: []restart.Member{member(2), member(3), member(4)}, Certified: 3}
	for _, i := range []int{0, 1} {
		if _, err := restart.Sync(ctx, member(i), src, DefaultFenceBuckets, func(time.Duration) error { return nil }); err != nil {
			t.Fatalf("sync of master %d: %v", i, err)
		}
	}
	a := cutClient(t, r.clients, []int{0, 1}, WithQuarantine(30*time.Second))
	lease, err := a.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {2,3,4}: %v", err)
	}
	defer lease.Release(ctx)
	flush(2, 3)
	stopped := []restart.Member{member(0), member(1), member(2), member(3)}
	if _, err := restart.Scratch(ctx, stopped, nil, 5, 3, DefaultFenceBuckets); !errors.Is(err, restart.ErrNotScratch) {
		t.Fatalf("the scratch of {0, 1, 2, 3}: %v; want it stopped with ErrNotScratch", err)
	}
	b, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	if l, err := b.TryLock(ctx, "k", 30*time.Second); err == nil {
		_ = l.Release(ctx)
		t.Fatalf("B holds k (token %d) beside A (token %d): masters 2 and 3 were completed on another scratch's guard", l.Token(), lease.Token())
	} else if !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("B's TryLock: %v; want ErrNotAcquired", err)
	}
	for _, i := range []int{2, 3} {
		if h := b.Health()[i]; !h.Quarantined {
			t.Fatalf("master %d seen by B: %+v; want it quarantined", i, h)
		}
	}
	if lease.Err() != nil {
		t.Fatalf("A's lease: %v", lease.Err())
	}
}
