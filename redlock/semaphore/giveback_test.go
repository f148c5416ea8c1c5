package semaphore

import (
	"context"
	"testing"
	"time"
)

// An attempt whose answer never came (the master SIGSTOPped, the caller's
// context over) may still be admitted when the master resumes: the place is
// given back in the background instead of staying taken for the permit's
// whole timeout (a minute here), for every variant on one master.
func TestTryAcquireWithoutAnAnswerGivesThePlaceBack(t *testing.T) {
	for _, v := range []Variant{Atomic, Basic, Fair, Guarded} {
		t.Run(v.String(), func(t *testing.T) {
			c, m := realMasters(t, 1)
			s := newSem(t, m, "giveback", 1, WithVariant(v), WithTimeout(time.Minute))
			warm, err := s.TryAcquire(ctxFor(t, 5*time.Second)) // a connection in the pool: the attempt below is sent, not stuck in a handshake
			if err != nil {
				t.Fatal(err)
			}
			if err := warm.Release(ctxFor(t, 5*time.Second)); err != nil {
				t.Fatal(err)
			}
			if err := c.Servers[0].Pause(); err != nil {
				t.Fatal(err)
			}
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			_, err = s.TryAcquire(ctx)
			cancel()
			if err == nil {
				t.Fatal("TryAcquire on a paused master succeeded")
			}
			if err := c.Servers[0].Resume(); err != nil {
				t.Fatal(err)
			}
			deadline := time.Now().Add(10 * time.Second)
			for {
				n, err := s.Holders(ctxFor(t, 5*time.Second))
				if err == nil && n == 0 {
					break
				}
				if time.Now().After(deadline) {
					t.Fatalf("%d holders 10 s after the unanswered attempt (%v); want its place given back", n, err)
				}
				time.Sleep(50 * time.Millisecond)
			}
			p, err := s.TryAcquire(ctxFor(t, 5*time.Second))
			if err != nil {
				t.Fatalf("TryAcquire after the give-back: %v", err)
			}
			_ = p.Release(ctxFor(t, 5*time.Second))
		})
	}
}
