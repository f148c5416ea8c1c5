package semaphore

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

func TestNewRejectsBadInput(t *testing.T) {
	_, one := miniMaster(t)
	_, two := miniMaster(t)
	both := append(append([]redis.UniversalClient{}, one...), two...)
	cases := []struct {
		name    string
		masters []redis.UniversalClient
		sem     string
		limit   int
		opts    []Option
		want    string
	}{
		{"zero limit", one, "s", 0, nil, "limit 0"},
		{"negative limit", one, "s", -3, nil, "limit -3"},
		{"empty name", one, "", 1, nil, "empty name"},
		{"no masters", nil, "s", 1, nil, "no masters"},
		{"nil master", []redis.UniversalClient{nil}, "s", 1, nil, "nil client"},
		{"zero timeout", one, "s", 1, []Option{WithTimeout(0)}, "timeout 0s is not positive"},
		{"negative timeout", one, "s", 1, []Option{WithTimeout(-time.Second)}, "not positive"},
		{"short timeout", one, "s", 1, []Option{WithTimeout(time.Millisecond)}, "below the minimum"},
		{"fractional timeout", one, "s", 1, []Option{WithTimeout(time.Second + time.Microsecond)}, "whole number"},
		{"Basic on two", both, "s", 1, []Option{WithVariant(Basic)}, "variant Basic takes exactly one master"},
		{"Fair on two", both, "s", 1, []Option{WithVariant(Fair)}, "variant Fair takes exactly one master"},
		{"Guarded on two", both, "s", 1, []Option{WithVariant(Guarded)}, "variant Guarded takes exactly one master"},
		{"unknown variant", one, "s", 1, []Option{WithVariant(Variant(9))}, "unknown variant"},
		{"nil option", one, "s", 1, []Option{nil}, "nil option"},
		{"nil now", one, "s", 1, []Option{WithNow(nil)}, "nil now"},
		{"nil logger", one, "s", 1, []Option{WithLogger(nil)}, "nil logger"},
		{"nil clock", one, "s", 1, []Option{WithClock(nil)}, "nil clock"},
		{"long refresh", one, "s", 1, []Option{WithAutoRefreshInterval(10 * time.Second)}, "auto-refresh interval"},
		{"zero refresh", one, "s", 1, []Option{WithAutoRefreshInterval(0)}, "auto-refresh interval"},
		{"zero guard wait", one, "s", 1, []Option{WithGuardWait(0)}, "guard wait"},
		{"too many slots", both, "s", MaxSlots + 1, nil, "slots"},
		{"nil lock option", one, "s", 1, []Option{WithLockOptions(nil)}, "nil lock option"},
		{"nil retry", one, "s", 1, []Option{WithRetry(nil)}, "nil backoff"},
	}
	for _, tc := range cases {
		t.Run(tc.name, func(t *testing.T) {
			s, err := New(tc.masters, tc.sem, tc.limit, tc.opts...)
			if err == nil {
				_ = s.Close()
				t.Fatal("New accepted it")
			}
			if !errors.Is(err, ErrInvalidArgument) || !errors.Is(err, redlock.ErrInvalidArgument) {
				t.Fatalf("error %v does not match ErrInvalidArgument", err)
			}
			if !strings.Contains(err.Error(), tc.want) {
				t.Fatalf("error %q does not name the problem (%q)", err, tc.want)
			}
		})
	}
}

func TestErrLostMatchesLockLost(t *testing.T) {
	if !errors.Is(ErrLost, redlock.ErrLockLost) {
		t.Fatal("ErrLost does not match redlock.ErrLockLost")
	}
	if err := lost("x"); !errors.Is(err, ErrLost) || !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("%v does not match both", err)
	}
	if errors.Is(ErrBusy, ErrLost) || errors.Is(redlock.ErrLockLost, ErrLost) {
		t.Fatal("unrelated errors match ErrLost")
	}
}

// Every variant on one (in-process) master: fill, busy, release, reuse,
// release twice, Holders, Done after release.
func TestLifecycleEachVariant(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			_, m := miniMaster(t)
			s := newSem(t, m, "life", 3, WithVariant(v))
			ctx := ctxFor(t, 10*time.Second)
			ps := mustAcquire(t, s, 3)
			if _, err := s.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("fourth TryAcquire: %v, want ErrBusy", err)
			}
			if n, err := s.Holders(ctx); err != nil || n != 3 {
				t.Fatalf("Holders = %d, %v; want 3", n, err)
			}
			if err := ps[0].Release(ctx); err != nil {
				t.Fatalf("Release: %v", err)
			}
			select {
			case <-ps[0].Done():
			default:
				t.Fatal("Done not closed after Release")
			}
			if c := context.Cause(ps[0].Context()); !errors.Is(c, ErrReleased) {
				t.Fatalf("cause after release: %v", c)
			}
			if err := ps[0].Release(ctx); !errors.Is(err, ErrReleased) {
				t.Fatalf("second Release: %v, want ErrReleased", err)
			}
			if err := ps[0].Refresh(ctx); !errors.Is(err, ErrLost) {
				t.Fatalf("Refresh after Release: %v, want ErrLost", err)
			}
			p, err := s.TryAcquire(ctx)
			if err != nil {
				t.Fatalf("TryAcquire after a release: %v", err)
			}
			if v == Atomic {
				if p.Token() <= ps[2].Token() || ps[2].Token() <= ps[1].Token() || ps[1].Token() == 0 {
					t.Fatalf("tokens %d, %d, %d do not grow", ps[1].Token(), ps[2].Token(), p.Token())
				}
			} else if p.Token() != 0 {
				t.Fatalf("%v handed out token %d", v, p.Token())
			}
			for _, q := range append(ps[1:], p) {
				if err := q.Refresh(ctx); err != nil {
					t.Fatalf("Refresh: %v", err)
				}
				if err := q.Release(ctx); err != nil {
					t.Fatalf("Release: %v", err)
				}
			}
			if n, err := s.Holders(ctx); err != nil || n != 0 {
				t.Fatalf("Holders = %d, %v; want 0", n, err)
			}
		})
	}
}

// A permit removed on the master (another client's cleanup, an operator)
// is reported lost by Refresh, never re-added.
func TestRefreshNeverReacquires(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			mr, m := miniMaster(t)
			s := newSem(t, m, "gone", 2, WithVariant(v))
			ctx := ctxFor(t, 10*time.Second)
			p := mustAcquire(t, s, 1)[0]
			mr.Del(keysFor("gone").holders)
			err := p.Refresh(ctx)
			if !errors.Is(err, ErrLost) || !errors.Is(err, redlock.ErrLockLost) {
				t.Fatalf("Refresh of a removed permit: %v, want ErrLost", err)
			}
			select {
			case <-p.Done():
			default:
				t.Fatal("Done not closed")
			}
			if n, _ := s.Holders(ctx); n != 0 {
				t.Fatalf("Refresh re-added the permit: %d holders", n)
			}
			if err := p.Release(ctx); !errors.Is(err, ErrLost) {
				t.Fatalf("Release of a lost permit: %v, want ErrLost", err)
			}
		})
	}
}

func TestClosed(t *testing.T) {
	_, m := miniMaster(t)
	s, err := New(m, "closed", 1)
	if err != nil {
		t.Fatal(err)
	}
	_ = s.Close()
	_ = s.Close()
	if _, err := s.TryAcquire(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryAcquire after Close: %v", err)
	}
	if _, err := s.Acquire(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Acquire after Close: %v", err)
	}
	if _, err := s.Holders(context.Background()); !errors.Is(err, ErrClosed) {
		t.Fatalf("Holders after Close: %v", err)
	}
}

// Acquire on a full semaphore ends with ctx, and its error says both why
// (the deadline) and what it last saw (busy). The deadline passes only once
// the first attempt has answered busy (the retry's backoff lets it pass),
// not on a timer: under load a 150 ms deadline used to end the first
// attempt's read itself, with no busy seen.
func TestAcquireEndsWithContext(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			_, m := miniMaster(t)
			ctx := newExpiring()
			s := newSem(t, m, "full", 1, WithVariant(v), WithRetry(func() backoff.BackOff { return expireOnRetry{ctx} }))
			ps := mustAcquire(t, s, 1)
			defer releaseAll(t, ps)
			_, err := s.Acquire(ctx)
			if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrBusy) {
				t.Fatalf("Acquire on a full semaphore: %v", err)
			}
		})
	}
}

// expiring is a context whose deadline passes when expire is called; its
// Deadline is far, so that no read times out before.
type expiring struct {
	context.Context
	once sync.Once
	done chan struct{}
}

func newExpiring() *expiring {
	return &expiring{Context: context.Background(), done: make(chan struct{})}
}

func (e *expiring) expire()                     { e.once.Do(func() { close(e.done) }) }
func (e *expiring) Done() <-chan struct{}       { return e.done }
func (e *expiring) Deadline() (time.Time, bool) { return time.Now().Add(time.Hour), true }
func (e *expiring) Err() error {
	select {
	case <-e.done:
		return context.DeadlineExceeded
	default:
		return nil
	}
}

// expireOnRetry is a backoff that lets ctx's deadline pass when Acquire asks
// for its first wait, that is once an attempt has answered.
type expireOnRetry struct{ ctx *expiring }

func (b expireOnRetry) NextBackOff() time.Duration { b.ctx.expire(); return time.Second }
func (b expireOnRetry) Reset()                     {}

func TestVariantString(t *testing.T) {
	for v, want := range map[Variant]string{Atomic: "Atomic", Basic: "Basic", Fair: "Fair", Guarded: "Guarded", Variant(7): "Variant(7)"} {
		if v.String() != want {
			t.Errorf("%d.String() = %q", int(v), v.String())
		}
	}
}
