package semaphore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"
)

// A client with another limit than the semaphore's holders is refused with
// ErrInvalidArgument naming both limits, on real masters, for every variant
// (and on three masters), by TryAcquire, Acquire (at once) and Holders on
// several masters; it takes no place. On one master the limit can change
// once nobody holds a permit; on several it stays until its key is deleted
// on every master.
func TestLimitMismatchIsRefused(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			one := newSem(t, m, "cap", 1, WithVariant(tc.variant))
			two := newSem(t, m, "cap", 2, WithVariant(tc.variant))
			ctx := ctxFor(t, 20*time.Second)
			held := mustAcquire(t, one, 1)

			wantRefused := func(what string, err error) {
				t.Helper()
				if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "limit 2") || !strings.Contains(err.Error(), "limit 1") {
					t.Fatalf("%s with limit 2 while limit 1 is held: %v; want ErrInvalidArgument naming both limits", what, err)
				}
			}
			p, err := two.TryAcquire(ctx)
			if err == nil {
				_ = p.Release(ctx)
			}
			wantRefused("TryAcquire", err)
			t.Logf("refused: %v", err)
			actx, cancel := context.WithTimeout(ctx, 5*time.Second)
			start := time.Now()
			_, err = two.Acquire(actx)
			cancel()
			wantRefused("Acquire", err)
			if took := time.Since(start); took > 4*time.Second {
				t.Fatalf("Acquire waited %v for a refusal", took)
			}
			if tc.masters > 1 {
				_, err = two.Holders(ctx)
				wantRefused("Holders", err)
			}
			if n := believed(t, held); n != 1 {
				t.Fatal("the limit-1 holder lost its permit")
			}
			if _, err := one.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("a second limit-1 TryAcquire: %v; want ErrBusy (the refused attempts took no place)", err)
			}
			releaseAll(t, held)

			if tc.masters == 1 {
				// Nobody holds a permit: the next holders may use another limit.
				ps := mustAcquire(t, two, 2)
				defer releaseAll(t, ps)
				if _, err := one.TryAcquire(ctx); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "limit 1") {
					t.Fatalf("limit 1 while limit 2 is held: %v; want ErrInvalidArgument", err)
				}
				return
			}
			// Several masters: the limit stays, even with no holder, until
			// its key is deleted on every master.
			if _, err := two.TryAcquire(ctx); !errors.Is(err, ErrInvalidArgument) {
				t.Fatalf("limit 2 on several masters after every limit-1 permit ended: %v; want ErrInvalidArgument", err)
			}
			for _, rdb := range m {
				if err := rdb.Del(ctx, LimitKey("cap")).Err(); err != nil {
					t.Fatal(err)
				}
			}
			ps := mustAcquire(t, two, 2)
			releaseAll(t, ps)
		})
	}
}
