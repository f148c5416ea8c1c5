package semaphore

import (
	"context"
	"errors"
	"fmt"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Atomic on 3, 5 and 7 real masters: distinct slots, per-slot tokens that
// grow, Holders, busy; permits still taken and the limit still held with a
// minority of masters stopped; no quorum (a majority stopped) reported as
// such, not as busy.
func TestSlotsOnSeveralMasters(t *testing.T) {
	for _, n := range []int{3, 5, 7} {
		t.Run(fmt.Sprintf("%d masters", n), func(t *testing.T) {
			c, m := realMasters(t, n)
			s := newSem(t, m, "slots", 3)
			ctx := ctxFor(t, 30*time.Second)
			ps := mustAcquire(t, s, 3)
			seen := map[int]bool{}
			for _, p := range ps {
				if p.Slot() < 0 || p.Slot() >= 3 || seen[p.Slot()] {
					t.Fatalf("slot %d handed out twice or out of range", p.Slot())
				}
				seen[p.Slot()] = true
				if p.Token() == 0 {
					t.Fatal("a slot permit without a fencing token")
				}
			}
			if h, err := s.Holders(ctx); err != nil || h != 3 {
				t.Fatalf("Holders = %d, %v; want 3", h, err)
			}
			if _, err := s.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("fourth TryAcquire: %v, want ErrBusy", err)
			}
			old := ps[0]
			if err := old.Release(ctx); err != nil {
				t.Fatal(err)
			}
			// Release returns once a majority deleted the key; let the rest
			// land before stopping masters, or a stopped one keeps it.
			waitFor(t, "the released slot's key to go from every master", func() bool {
				for _, rdb := range m {
					if n, err := rdb.Exists(ctx, slotKey("slots", old.Slot())).Result(); err != nil || n != 0 {
						return false
					}
				}
				return true
			})

			// A minority stopped: the freed place is taken again, with a
			// greater token, and the limit still holds.
			minority := (n - 1) / 2
			for i := range minority {
				if err := c.Servers[i].Pause(); err != nil {
					t.Fatal(err)
				}
			}
			p, err := s.TryAcquire(ctx)
			if err != nil {
				t.Fatalf("TryAcquire with %d of %d masters stopped: %v", minority, n, err)
			}
			if p.Slot() != old.Slot() || p.Token() <= old.Token() {
				t.Fatalf("slot %d token %d after slot %d token %d: want the freed slot with a greater token", p.Slot(), p.Token(), old.Slot(), old.Token())
			}
			ps[0] = p
			if _, err := s.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("fourth TryAcquire with %d stopped: %v, want ErrBusy", minority, err)
			}

			// One more stopped: a majority is out of reach. Not busy.
			if err := c.Servers[minority].Pause(); err != nil {
				t.Fatal(err)
			}
			if err := p.Release(ctx); err != nil && !errors.Is(err, redlock.ErrNoQuorum) {
				t.Fatal(err)
			}
			_, err = s.TryAcquire(ctx)
			if !errors.Is(err, redlock.ErrNoQuorum) || errors.Is(err, ErrBusy) {
				t.Fatalf("TryAcquire with %d of %d masters stopped: %v, want ErrNoQuorum", minority+1, n, err)
			}
			c.ResumeAll()
			releaseAll(t, ps[1:])
			// Resumed masters apply what queued up in their sockets meanwhile
			// (the releases' deletes among them) before they answer again;
			// keys they missed expire with their TTL.
			deadline := time.Now().Add(15 * time.Second)
			for {
				h, err := s.Holders(ctx)
				if err == nil && h == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("Holders after releases = %d, %v; want 0", h, err)
				}
				time.Sleep(20 * time.Millisecond)
			}
		})
	}
}

// A slot permit lost on the masters (its keys deleted) reports ErrLost on
// Refresh and Release, and its Done closes.
func TestSlotPermitLost(t *testing.T) {
	_, m := realMasters(t, 3)
	s := newSem(t, m, "slotlost", 2)
	p := mustAcquire(t, s, 1)[0]
	for _, rdb := range m {
		if err := rdb.Del(context.Background(), slotKey("slotlost", p.Slot())).Err(); err != nil {
			t.Fatal(err)
		}
	}
	err := p.Refresh(ctxFor(t, 5*time.Second))
	if !errors.Is(err, ErrLost) || !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Refresh of a deleted slot: %v, want ErrLost", err)
	}
	select {
	case <-p.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed")
	}
	if c := context.Cause(p.Context()); !errors.Is(c, ErrLost) {
		t.Fatalf("cause %v, want ErrLost", c)
	}
	if err := p.Release(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrLost) {
		t.Fatalf("Release: %v, want ErrLost", err)
	}
}
