package redlock

import (
	"context"
	"encoding/json"
	"errors"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// lockAndShare takes key with c and returns the lease and its State, once
// every master holds it: a lock returns once a majority granted it, and the
// SETs to the others may still be on their way; the tests that count keys
// afterwards start from all five.
func lockAndShare(t *testing.T, r *rig, c *Client, key string, ttl time.Duration) (*Lease, LeaseState) {
	t.Helper()
	l, err := c.TryLock(context.Background(), key, ttl)
	if err != nil {
		t.Fatal(err)
	}
	st, err := l.State()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "every master holds the new lease's key", func() bool {
		for _, v := range r.values(t, key) {
			if v != st.Value {
				return false
			}
		}
		return true
	})
	return l, st
}

// A lease handed to another Client through its State, as another process
// would get it (JSON), is the same lease there: a third client is refused
// while it is held, the resumed lease extends it and releases it on every
// master, the original can then no longer extend it (Extend never revives a
// lost lock), and the next holder's token is greater.
func TestResumedLeaseActsOnTheSameLock(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	a, b, other := r.client(t), r.client(t), r.client(t)
	orig, st := lockAndShare(t, r, a, "job", 10*time.Second)
	if st.ValidUntil != st.ValidUntil.Round(0) || st.ValidUntil.Sub(orig.ValidUntil()).Abs() > time.Millisecond {
		t.Fatalf("State().ValidUntil %v; want the lease's deadline %v on the wall clock", st.ValidUntil, orig.ValidUntil())
	}
	wire, err := json.Marshal(st)
	if err != nil {
		t.Fatal(err)
	}
	var got LeaseState
	if err := json.Unmarshal(wire, &got); err != nil {
		t.Fatal(err)
	}
	if got.Key != st.Key || got.Value != st.Value || got.Token != st.Token || got.TTL != st.TTL || !got.ValidUntil.Equal(st.ValidUntil) {
		t.Fatalf("LeaseState after JSON: %+v; want %+v", got, st)
	}

	resumed, err := b.Resume(got)
	if err != nil {
		t.Fatalf("Resume: %v", err)
	}
	if resumed.Key() != "job" || resumed.Token() != orig.Token() || resumed.TTL() != 10*time.Second || resumed.Err() != nil {
		t.Fatalf("resumed lease: key %q token %d ttl %v err %v; want the original's (token %d)",
			resumed.Key(), resumed.Token(), resumed.TTL(), resumed.Err(), orig.Token())
	}
	if d := resumed.ValidUntil().Sub(orig.ValidUntil()).Abs(); d > 5*time.Millisecond {
		t.Fatalf("resumed ValidUntil is %v off the original's", d)
	}
	if _, err := other.TryLock(ctx, "job", 10*time.Second); !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("a third client's TryLock while the resumed lease is held: %v; want ErrNotAcquired", err)
	}
	before := resumed.ValidUntil()
	if err := resumed.Extend(ctx, 20*time.Second); err != nil {
		t.Fatalf("Extend of the resumed lease: %v", err)
	}
	if !resumed.ValidUntil().After(before) || resumed.TTL() != 20*time.Second {
		t.Fatalf("after Extend: valid until %v (was %v), ttl %v", resumed.ValidUntil(), before, resumed.TTL())
	}
	if err := resumed.Release(ctx); err != nil {
		t.Fatalf("Release of the resumed lease: %v", err)
	}
	// Release returns once a majority deleted; the rest follow.
	eventually(t, 5*time.Second, "the key gone from every master after the resumed lease's Release",
		func() bool { return countNonEmpty(r.values(t, "job")) == 0 })
	if err := orig.Extend(ctx, 10*time.Second); !errors.Is(err, ErrLockLost) {
		t.Fatalf("the original's Extend after the resumed lease released the lock: %v; want ErrLockLost", err)
	}
	if v := r.values(t, "job"); countNonEmpty(v) != 0 {
		t.Fatalf("a failed Extend brought the key back: %q", v)
	}
	next, err := other.TryLock(ctx, "job", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer next.Release(ctx)
	if next.Token() <= orig.Token() {
		t.Fatalf("next holder's token %d; want above the resumed lease's %d", next.Token(), orig.Token())
	}
}

// A resumed lease whose lock was taken over meanwhile (its keys expired and
// someone else holds them) cannot be extended and releases nothing of the
// new holder's.
func TestResumedLeaseCannotTouchAnotherOwnersKey(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	c := r.client(t)
	orig, err := c.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st, err := orig.State()
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range r.clients { // the keys expire, another owner takes them
		if err := rc.Set(ctx, "k", "another owner", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	resumed, err := c.Resume(st)
	if err != nil {
		t.Fatal(err)
	}
	if err := resumed.Extend(ctx, time.Second); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Extend of a resumed lease over another owner's keys: %v; want ErrLockLost", err)
	}
	_ = resumed.Release(ctx)
	for i, v := range r.values(t, "k") {
		if v != "another owner" {
			t.Fatalf("master %d: %q; want the other owner's key untouched", i, v)
		}
	}
}

// Every bad state gets a clear error, and nothing is sent.
func TestResumeRejectsBadStates(t *testing.T) {
	r := newRig(t, 3)
	clk := newFakeClock()
	c := r.client(t, WithClock(clk))
	now := clk.Now()
	good := LeaseState{Key: "k", Value: "v", Token: 7, TTL: 10 * time.Second, ValidUntil: now.Add(5 * time.Second)}
	for _, tc := range []struct {
		name string
		edit func(*LeaseState)
		want error
	}{
		{"empty key", func(s *LeaseState) { s.Key = "" }, ErrInvalidArgument},
		{"reserved key", func(s *LeaseState) { s.Key = keys.Prefix + "x" }, ErrInvalidArgument},
		{"empty value", func(s *LeaseState) { s.Value = "" }, ErrInvalidArgument},
		{"zero ttl", func(s *LeaseState) { s.TTL = 0 }, ErrInvalidArgument},
		{"ttl below a millisecond step", func(s *LeaseState) { s.TTL = time.Second + time.Microsecond }, ErrInvalidArgument},
		{"token out of range", func(s *LeaseState) { s.Token = fencing.MaxToken + 1 }, ErrInvalidArgument},
		{"validity ended", func(s *LeaseState) { s.ValidUntil = now.Add(-time.Millisecond) }, ErrLockLost},
		{"validity ends now", func(s *LeaseState) { s.ValidUntil = now }, ErrLockLost},
		{"no validity", func(s *LeaseState) { s.ValidUntil = time.Time{} }, ErrInvalidArgument},
	} {
		s := good
		tc.edit(&s)
		if l, err := c.Resume(s); !errors.Is(err, tc.want) || l != nil {
			t.Errorf("%s: Resume = %v, %v; want %v", tc.name, l, err, tc.want)
		}
	}
	if _, err := c.Resume(good, WithAutoExtendInterval(10*time.Second)); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("auto-extend interval as long as the TTL: %v; want ErrInvalidArgument", err)
	}
	unfenced := r.client(t, WithClock(clk), WithFencing(false))
	if _, err := unfenced.Resume(good); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("a token given to a Client without fencing: %v; want ErrInvalidArgument", err)
	}

	// A deadline further off than a fresh TTL's validity is cut to it.
	far := good
	far.ValidUntil = now.Add(time.Hour)
	l, err := c.Resume(far)
	if err != nil {
		t.Fatal(err)
	}
	if want := now.Add(c.validity(far.TTL)); !l.ValidUntil().Equal(want) {
		t.Fatalf("resumed deadline %v; want at most a fresh TTL's validity, %v", l.ValidUntil(), want)
	}
	clk.Advance(c.validity(far.TTL))
	if err := l.Err(); !errors.Is(err, ErrLockLost) {
		t.Fatalf("resumed lease past its deadline: Err = %v; want ErrLockLost", err)
	}
	if _, err := l.State(); !errors.Is(err, ErrLockLost) {
		t.Fatalf("State of an ended lease: %v; want ErrLockLost", err)
	}

	_ = c.Close()
	if _, err := c.Resume(good); !errors.Is(err, ErrClosed) {
		t.Fatalf("Resume after Close: %v; want ErrClosed", err)
	}
}

// A lease of several keys has no single State.
func TestStateOfAMultiKeyLeaseIsRefused(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 3)
	c := r.client(t)
	l, err := c.TryLockAll(ctx, []string{"a", "b"}, 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer l.Release(ctx)
	if _, err := l.State(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("State of a LockAll lease: %v; want ErrInvalidArgument", err)
	}
	var nilLease *Lease
	if _, err := nilLease.State(); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("State of a nil lease: %v; want ErrInvalidArgument", err)
	}
}

// Two leases with one value, the original and its resumed copy: when one
// of them ends by its validity while the other is extended, the ended
// one's Client must not treat the keys it left as its own to overwrite (as
// it does after its own releases): the other lease still holds them. Both
// directions: the original ends while the copy is extended, and the copy
// ends while the original is extended.
func TestEndOfASharedLeaseNeverLetsItsClientOverwriteTheOther(t *testing.T) {
	for _, tc := range []struct {
		name        string
		copyExpires bool // else the original expires
	}{
		{"original expires, copy extended", false},
		{"copy expires, original extended", true},
	} {
		t.Run(tc.name, func(t *testing.T) {
			ctx := context.Background()
			r := newRig(t, 5)
			clkA, clkB := newFakeClock(), newFakeClock()
			a, b := r.client(t, WithClock(clkA)), r.client(t, WithClock(clkB))
			orig, st := lockAndShare(t, r, a, "job", 2*time.Second)
			resumed, err := b.Resume(st)
			if err != nil {
				t.Fatal(err)
			}
			kept, ended, endedClient, endedClock := resumed, orig, a, clkA
			if tc.copyExpires {
				kept, ended, endedClient, endedClock = orig, resumed, b, clkB
			}
			if err := kept.Extend(ctx, time.Minute); err != nil {
				t.Fatalf("Extend of the lease that stays: %v", err)
			}

			endedClock.Advance(3 * time.Second)
			if err := ended.Err(); !errors.Is(err, ErrLockLost) {
				t.Fatalf("the other lease after its validity: %v; want ErrLockLost", err)
			}
			if l, err := endedClient.TryLock(ctx, "job", 2*time.Second); !errors.Is(err, ErrNotAcquired) {
				if l != nil {
					_ = l.Release(ctx)
				}
				t.Fatalf("TryLock by the Client of the ended lease while the other holds the lock: %v; want ErrNotAcquired", err)
			}
			vals := r.values(t, "job")
			for i, v := range vals {
				if v != st.Value && v != "" {
					t.Fatalf("master %d holds %q; want only the lease that stayed (%q)", i, v, st.Value)
				}
			}
			if countNonEmpty(vals) < 3 {
				t.Fatalf("values per master %q; want the lease that stayed on a majority", vals)
			}
			if err := kept.Err(); err != nil {
				t.Fatalf("the lease that stayed: %v", err)
			}
			if err := kept.Release(ctx); err != nil {
				t.Fatal(err)
			}
		})
	}
}

// A resumed lease with auto-extension and less validity left than the
// renewal interval (a 30 s TTL renews every 10 s; 7 s are left) renews
// before that validity ends, not an interval later.
func TestResumedLeaseAutoExtendsBeforeItsShortValidityEnds(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	a := r.client(t)
	orig, err := a.TryLock(ctx, "job", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	st, err := orig.State()
	if err != nil {
		t.Fatal(err)
	}
	clk := newFakeClock()
	b := r.client(t, WithClock(clk))
	st.ValidUntil = clk.Now().Add(7 * time.Second) // as b's clock reads it
	resumed, err := b.Resume(st, WithAutoExtend())
	if err != nil {
		t.Fatal(err)
	}
	before := resumed.ValidUntil()
	clk.Advance(3500 * time.Millisecond) // half the validity left: the first renewal is due
	eventually(t, 5*time.Second, "the resumed lease renewed", func() bool { return resumed.ValidUntil().After(before) })
	if err := resumed.Err(); err != nil {
		t.Fatalf("after its renewal: %v", err)
	}
	if err := resumed.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// failExtends is a go-redis hook that, while on, fails every pipeline
// carrying the extend script, without sending it.
type failExtends struct{ on atomic.Bool }

var errInjectedExtend = errors.New("injected: extend not sent")

func (f *failExtends) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (f *failExtends) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (f *failExtends) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if f.on.Load() {
			for _, c := range cmds {
				if args := c.Args(); len(args) > 1 && args[1] == extendScript.Hash() {
					for _, c := range cmds {
						c.SetErr(errInjectedExtend)
					}
					return errInjectedExtend
				}
			}
		}
		return next(ctx, cmds)
	}
}

// A shared lease that is lost because its own renewal failed (no quorum:
// three masters' extends fail on its side only) must not delete the keys:
// its resumed copy still holds them, valid. An unshared lease removes its
// keys when it is lost; this one leaves them to the copy.
func TestLostSharedLeaseLeavesTheKeysToItsCopy(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	own := r.Clients(t)
	failing := &failExtends{}
	for _, rc := range own[:3] {
		rc.AddHook(failing)
	}
	a, err := New(own, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer a.Close()
	orig, err := a.TryLock(ctx, "job", 10*time.Second, WithAutoExtendInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	st, err := orig.State()
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "every master holds the lease", func() bool {
		for _, v := range r.values(t, "job") {
			if v != st.Value {
				return false
			}
		}
		return true
	})
	b := r.client(t)
	resumed, err := b.Resume(st)
	if err != nil {
		t.Fatal(err)
	}

	failing.on.Store(true)
	select {
	case <-orig.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("the original's failing renewals never ended it")
	}
	if err := orig.Err(); !errors.Is(err, ErrLockLost) {
		t.Fatalf("the original after its renewal failed: %v; want ErrLockLost", err)
	}
	if err := a.Close(); err != nil { // waits for every goroutine it started, a background delete included
		t.Fatal(err)
	}
	for i, v := range r.values(t, "job") {
		if v != st.Value {
			t.Fatalf("master %d holds %q after the original was lost; want the copy's keys untouched", i, v)
		}
	}
	if err := resumed.Extend(ctx, 10*time.Second); err != nil {
		t.Fatalf("the resumed copy's Extend: %v; want its keys still there", err)
	}
	if err := resumed.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

func TestRenewalAfter(t *testing.T) {
	for _, tc := range []struct{ interval, left, want time.Duration }{
		{10 * time.Second, 29 * time.Second, 10 * time.Second}, // the usual: every interval
		{10 * time.Second, 7 * time.Second, 3500 * time.Millisecond},
		{10 * time.Second, 10 * time.Second, 5 * time.Second}, // an interval of exactly the validity left would be too late
		{10 * time.Second, time.Millisecond, time.Millisecond},
		{10 * time.Second, -time.Second, time.Millisecond},
	} {
		if got := renewalAfter(tc.interval, tc.left); got != tc.want {
			t.Errorf("renewalAfter(%v, %v) = %v; want %v", tc.interval, tc.left, got, tc.want)
		}
	}
}
