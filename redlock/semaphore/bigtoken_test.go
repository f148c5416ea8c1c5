package semaphore

import (
	"errors"
	"strconv"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// The one-master Atomic semaphore hands out tokens up to 2^53 − 1 exactly
// (Lua's tostring writes 10^14 as "1e+14"), stores them exactly, and once
// the counter is at 2^53 − 1 refuses with ErrTokensExhausted without
// holding a place.
func TestAtomicTokensUpToTwoToThe53(t *testing.T) {
	_, m := realMasters(t, 1)
	s := newSem(t, m, "big", 3)
	ctx := ctxFor(t, 10*time.Second)
	k := keysFor("big")
	for _, before := range []fencing.Token{99_999_999_999_999, fencing.MaxToken - 1} {
		if err := m[0].Set(ctx, k.fence, strconv.FormatUint(uint64(before), 10), 0).Err(); err != nil {
			t.Fatal(err)
		}
		p, err := s.TryAcquire(ctx)
		if err != nil {
			t.Fatalf("TryAcquire with the counter at %d: %v", before, err)
		}
		defer p.Release(ctx)
		if p.Token() != before+1 {
			t.Fatalf("token %d after %d", p.Token(), before)
		}
		stored, err := m[0].HGetAll(ctx, k.tokens).Result()
		if err != nil {
			t.Fatal(err)
		}
		want := strconv.FormatUint(uint64(before+1), 10)
		found := false
		for _, v := range stored {
			found = found || v == want
		}
		if !found {
			t.Fatalf("tokens hash %v does not hold %s exactly", stored, want)
		}
	}
	_, err := s.TryAcquire(ctx)
	if !errors.Is(err, redlock.ErrTokensExhausted) {
		t.Fatalf("TryAcquire with the counter at 2^53 − 1: %v; want ErrTokensExhausted", err)
	}
	if n, err := s.Holders(ctx); err != nil || n != 2 {
		t.Fatalf("Holders = %d, %v after the refused attempt; want the 2 permits, no place held by it", n, err)
	}
	if _, err := s.Acquire(ctxFor(t, 5*time.Second)); !errors.Is(err, redlock.ErrTokensExhausted) {
		t.Fatalf("Acquire with the tokens exhausted: %v; want ErrTokensExhausted at once", err)
	}
}
