package semaphore

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// The claims of Redis in Action 6.3 as tests on a real redis-server: Basic
// lets a client with a slow clock steal a place from one whose clock runs
// ahead; Fair over-admits when two attempts interleave their round trips;
// Guarded and Atomic never exceed the limit in either scenario.

const bookLimit = 5

type bookCase struct {
	name    string
	variant Variant
	masters int
}

var bookCases = []bookCase{
	{"Basic", Basic, 1},
	{"Fair", Fair, 1},
	{"Guarded", Guarded, 1},
	{"Atomic", Atomic, 1},
	{"Atomic/3 masters", Atomic, 3},
}

// Four permits are held by clients with true clocks, the fifth (the last
// place) by a client whose clock runs 2 s ahead. Then a client with a true
// clock tries once more.
func TestClockAheadSteal(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			honest := newSem(t, m, "skew", bookLimit, WithVariant(tc.variant))
			ahead := newSem(t, m, "skew", bookLimit, WithVariant(tc.variant),
				WithNow(func() time.Time { return time.Now().Add(2 * time.Second) }))
			ps := mustAcquire(t, honest, bookLimit-1)
			ps = append(ps, mustAcquire(t, ahead, 1)...)
			defer func() { releaseAll(t, ps) }()

			thief, err := honest.TryAcquire(ctxFor(t, 5*time.Second))
			if err == nil {
				ps = append(ps, thief)
			}
			n := believed(t, ps)
			t.Logf("sixth attempt: %v; %d permits believed held", err, n)
			if tc.variant == Basic {
				// The book's bug: the later caller with the slower clock ranks
				// below the fast client's entry and takes its place; the fast
				// client is not told, so six believe they hold five places.
				if err != nil {
					t.Fatalf("Basic: the steal did not happen: %v", err)
				}
				if n != bookLimit+1 {
					t.Fatalf("Basic: %d permits believed held after the steal, want %d", n, bookLimit+1)
				}
				return
			}
			if !errors.Is(err, ErrBusy) {
				t.Fatalf("%s: a sixth permit with %d held: %v", tc.name, bookLimit, err)
			}
			if n != bookLimit {
				t.Fatalf("%s: %d permits believed held, want %d", tc.name, n, bookLimit)
			}
		})
	}
}

// Four permits are held. Client A starts an attempt and is stopped in the
// middle of it (between Fair's two round trips; before Atomic's one script;
// between the multi-master survey and its slot lock); client B then makes a
// whole attempt; then A goes on.
func TestInterleavedAttempts(t *testing.T) {
	for _, tc := range bookCases {
		if tc.variant == Basic {
			continue // one round trip per attempt: no interleaving to force
		}
		t.Run(tc.name, func(t *testing.T) {
			_, m := realMasters(t, tc.masters)
			a := newSem(t, m, "race", bookLimit, WithVariant(tc.variant))
			b := newSem(t, m, "race", bookLimit, WithVariant(tc.variant))
			ps := mustAcquire(t, b, bookLimit-1)
			defer func() { releaseAll(t, ps) }()

			reached, proceed := make(chan struct{}), make(chan struct{})
			a.midAcquire = func() { close(reached); <-proceed }
			type result struct {
				p   *Permit
				err error
			}
			aDone := make(chan result, 1)
			go func() {
				p, err := a.TryAcquire(ctxFor(t, 10*time.Second))
				aDone <- result{p, err}
			}()
			<-reached
			pb, errB := b.TryAcquire(ctxFor(t, 5*time.Second))
			close(proceed)
			ra := <-aDone
			for _, p := range []*Permit{pb, ra.p} {
				if p != nil {
					ps = append(ps, p)
				}
			}
			n := believed(t, ps)
			t.Logf("A (interrupted): %v; B: %v; %d permits believed held", ra.err, errB, n)
			switch tc.variant {
			case Fair:
				// The book's race: A drew the smaller counter, B added itself
				// and ranked 4 (held), then A's add ranked 4 and pushed B to
				// 5 without B knowing: six believe they hold.
				if ra.err != nil || errB != nil {
					t.Fatalf("Fair: the race did not over-admit: A %v, B %v", ra.err, errB)
				}
				if n != bookLimit+1 {
					t.Fatalf("Fair: %d permits believed held, want %d", n, bookLimit+1)
				}
			case Guarded:
				// A holds the guard lock across its two round trips: B cannot
				// start its own within the guard wait, and is told busy.
				if !errors.Is(errB, ErrBusy) || ra.err != nil {
					t.Fatalf("Guarded: B %v (want ErrBusy), A %v (want held)", errB, ra.err)
				}
			default:
				// B took the last place; A's script (or slot lock) then finds
				// it taken.
				if errB != nil || !errors.Is(ra.err, ErrBusy) {
					t.Fatalf("Atomic: B %v (want held), A %v (want ErrBusy)", errB, ra.err)
				}
			}
			if tc.variant != Fair && n != bookLimit {
				t.Fatalf("%s: %d permits believed held, want %d", tc.name, n, bookLimit)
			}
			if tc.variant != Fair {
				if _, err := b.TryAcquire(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrBusy) {
					t.Fatalf("%s: TryAcquire with %d held: %v", tc.name, bookLimit, err)
				}
			}
		})
	}
}

// A client whose clock runs ahead by more than the timeout expires the
// entries of every other client of Basic and Fair: the other holders are
// lost, and Refresh says so rather than re-adding them.
func TestClockFarAheadLosesOthers(t *testing.T) {
	for _, v := range []Variant{Basic, Fair} {
		t.Run(v.String(), func(t *testing.T) {
			_, m := realMasters(t, 1)
			honest := newSem(t, m, "far", 2, WithVariant(v), WithTimeout(time.Second))
			ahead := newSem(t, m, "far", 2, WithVariant(v), WithTimeout(time.Second),
				WithNow(func() time.Time { return time.Now().Add(5 * time.Second) }))
			ps := mustAcquire(t, honest, 2)
			defer releaseAll(t, ps)
			q := mustAcquire(t, ahead, 1) // its cleanup drops both honest entries
			defer releaseAll(t, q)
			for _, p := range ps {
				if err := p.Refresh(ctxFor(t, 5*time.Second)); !errors.Is(err, ErrLost) {
					t.Fatalf("Refresh of an expired-by-skew permit: %v, want ErrLost", err)
				}
			}
			if n, _ := mastersZCard(t, m[0], keysFor("far").holders); n != 1 {
				t.Fatalf("%d entries left, want the fast client's only (Refresh must not re-add)", n)
			}
		})
	}
}

func mastersZCard(t *testing.T, rdb redis.UniversalClient, key string) (int64, error) {
	t.Helper()
	return rdb.ZCard(context.Background(), key).Result()
}
