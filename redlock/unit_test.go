package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"
)

// Fast unit tests on in-process miniredis masters. The behaviour under
// faults is proven against real redis-server processes in faults_test.go.

func miniClient(t *testing.T, cs []redis.UniversalClient, opts ...Option) *Client {
	t.Helper()
	c, err := New(cs, append([]Option{WithoutQuarantine(), WithMasterTimeout(time.Second)}, opts...)...)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return c
}

func TestNewRejectsBadInput(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	ten := make([]redis.UniversalClient, 10)
	for i := range ten {
		c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
		t.Cleanup(func() { _ = c.Close() })
		ten[i] = c
	}
	cases := map[string]struct {
		masters []redis.UniversalClient
		opts    []Option
		want    string
	}{
		"no masters":        {nil, nil, "no masters"},
		"too many":          {ten, nil, "at most 9"},
		"nil client":        {[]redis.UniversalClient{cs[0], nil}, nil, "master 1 is a nil client"},
		"typed nil client":  {[]redis.UniversalClient{cs[0], (*redis.Client)(nil)}, nil, "master 1 is a nil client"},
		"duplicate":         {[]redis.UniversalClient{cs[0], cs[1], cs[0]}, nil, "masters 0 and 2 are the same"},
		"nil option":        {cs, []Option{nil}, "nil option"},
		"negative drift":    {cs, []Option{WithDriftFactor(-0.1)}, "drift factor"},
		"huge drift":        {cs, []Option{WithDriftFactor(0.5)}, "drift factor"},
		"zero timeout":      {cs, []Option{WithMasterTimeout(0)}, "master timeout"},
		"nil backoff":       {cs, []Option{WithRetry(nil)}, "backoff"},
		"nil logger":        {cs, []Option{WithLogger(nil)}, "logger"},
		"nil clock":         {cs, []Option{WithClock(nil)}, "clock"},
		"negative quarant.": {cs, []Option{WithQuarantine(-time.Second)}, "quarantine"},
		"zero in flight":    {cs, []Option{WithMaxInFlight(0)}, "in flight"},
		"zero horizon":      {cs, []Option{WithCleanupHorizon(0)}, "cleanup horizon"},
	}
	for name, tc := range cases {
		_, err := New(tc.masters, tc.opts...)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: New = %v; want ErrInvalidArgument naming %q", name, err, tc.want)
		}
	}
}

func TestLockRejectsBadInput(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	c := miniClient(t, cs)
	ctx := context.Background()
	cases := map[string]struct {
		key  string
		ttl  time.Duration
		opts []LockOption
		want string
	}{
		"empty key":         {"", time.Second, nil, "empty key"},
		"reserved prefix":   {keys.Prefix + "x", time.Second, nil, "reserved prefix"},
		"zero ttl":          {"k", 0, nil, "not positive"},
		"negative ttl":      {"k", -time.Second, nil, "not positive"},
		"sub-ms ttl":        {"k", 1500 * time.Microsecond, nil, "whole number of milliseconds"},
		"ttl below drift":   {"k", 2 * time.Millisecond, nil, "no validity"},
		"ttl below timeout": {"k", time.Second, nil, "per-master timeout"},
		"nil lock option":   {"k", 5 * time.Second, []LockOption{nil}, "nil lock option"},
		"bad interval":      {"k", 5 * time.Second, []LockOption{WithAutoExtendInterval(0)}, "auto-extend interval"},
		"interval too long": {"k", 5 * time.Second, []LockOption{WithAutoExtendInterval(5 * time.Second)}, "not shorter than the validity"},
	}
	for name, tc := range cases {
		if _, err := c.TryLock(ctx, tc.key, tc.ttl, tc.opts...); !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), tc.want) {
			t.Errorf("%s: TryLock = %v; want ErrInvalidArgument naming %q", name, err, tc.want)
		}
		if _, err := c.Lock(ctx, tc.key, tc.ttl, tc.opts...); !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: Lock = %v; want ErrInvalidArgument", name, err)
		}
	}
	lease, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Extend(ctx, 0); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Extend(0) = %v; want ErrInvalidArgument", err)
	}
	var nilCtx context.Context
	if _, err := c.TryLock(nilCtx, "k2", 5*time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("TryLock(nil ctx) = %v; want ErrInvalidArgument", err)
	}
	if _, err := c.Lock(nilCtx, "k2", 5*time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Lock(nil ctx) = %v; want ErrInvalidArgument", err)
	}
	if err := lease.Extend(nilCtx, 5*time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Extend(nil ctx) = %v; want ErrInvalidArgument", err)
	}
	if err := lease.Release(nilCtx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Release(nil ctx) = %v; want ErrInvalidArgument", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Errorf("Release after the rejected calls: %v", err)
	}
}

func TestNilLease(t *testing.T) {
	var l *Lease
	ctx := context.Background()
	if err := l.Release(ctx); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Release = %v", err)
	}
	if err := l.Extend(ctx, time.Second); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Extend = %v", err)
	}
	if err := l.Err(); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Err = %v", err)
	}
	select {
	case <-l.Done():
	default:
		t.Error("Done of a nil lease is open")
	}
	if err := context.Cause(l.Context()); !errors.Is(err, ErrInvalidArgument) {
		t.Errorf("Context cause = %v", err)
	}
	if l.Key() != "" || l.Token() != 0 || l.TTL() != 0 || !l.ValidUntil().IsZero() {
		t.Error("accessors of a nil lease are not zero")
	}
}

func TestQuorumSizes(t *testing.T) {
	for n, want := range map[int]int{1: 1, 2: 2, 3: 2, 4: 3, 5: 3, 6: 4, 7: 4, 9: 5} {
		cs := newRig(t, n, onMiniredis()).clients
		if got := miniClient(t, cs).Quorum(); got != want {
			t.Errorf("%d masters: quorum %d, want %d", n, got, want)
		}
	}
}

func TestHeldByAnotherOwnerIsNotAcquiredNotNoQuorum(t *testing.T) {
	cs := newRig(t, 5, onMiniredis()).clients
	a, b := miniClient(t, cs), miniClient(t, cs)
	ctx := context.Background()
	lease, err := a.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_, err = b.TryLock(ctx, "k", 5*time.Second)
	if !errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrHeldByOther) {
		t.Fatalf("got %v; want ErrNotAcquired with ErrHeldByOther, not ErrNoQuorum", err)
	}
	var me *MasterError
	if !errors.As(err, &me) || me.Addr == "" {
		t.Fatalf("no per-master error in %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if l, err := b.TryLock(ctx, "k", 5*time.Second); err != nil {
		t.Fatalf("after release: %v", err)
	} else {
		_ = l.Release(ctx)
	}
}

func TestMasterErrorsMakeNoQuorum(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	c := miniClient(t, cs)
	ms[0].SetError("LOADING Redis is loading the dataset in memory")
	ms[1].SetError("LOADING Redis is loading the dataset in memory")
	_, err := c.TryLock(context.Background(), "k", 5*time.Second)
	if !errors.Is(err, ErrNoQuorum) || !strings.Contains(err.Error(), "LOADING") {
		t.Fatalf("got %v; want ErrNoQuorum carrying the masters' errors", err)
	}
	// The attempt may fail before master 2 answers; its key is then removed
	// in the background.
	eventually(t, 5*time.Second, "the granting master's key of the failed attempt removed", func() bool {
		return !ms[2].Exists("k")
	})
}

// The validity formula, on a clock that only the test moves:
// ValidUntil = start + ttl − (ttl·drift + 2 ms).
func TestValidityFormula(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	clk := newFakeClock()
	c := miniClient(t, cs, WithClock(clk), WithDriftFactor(0.01))
	start := clk.Now() // a step-less clock: the attempt reads this same instant
	lease, err := c.TryLock(context.Background(), "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	want := start.Add(10*time.Second - 100*time.Millisecond - 2*time.Millisecond)
	if !lease.ValidUntil().Equal(want) {
		t.Fatalf("ValidUntil %v, want %v", lease.ValidUntil(), want)
	}
}

// An attempt that takes longer than ttl − drift leaves no validity: it must
// fail and leave no key, even though every master granted.
func TestNoValidityLeftFails(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	clk := newFakeClock()
	clk.step = 2 * time.Second // every reading of the clock costs 2 s: more than the whole TTL
	c := miniClient(t, cs, WithClock(clk))
	_, err := c.TryLock(context.Background(), "k", time.Second+500*time.Millisecond)
	if !errors.Is(err, ErrNotAcquired) || !strings.Contains(err.Error(), "no validity left") {
		t.Fatalf("got %v; want ErrNotAcquired for no validity left", err)
	}
	// A grant that came after the decision is removed in the background.
	eventually(t, 5*time.Second, "no master keeps the key of an attempt without validity", func() bool {
		for _, m := range ms {
			if m.Exists("k") {
				return false
			}
		}
		return true
	})
}

func TestClosedClient(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	c := miniClient(t, cs)
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryLock(context.Background(), "k", 5*time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryLock after Close: %v", err)
	}
	if err := c.Close(); err != nil {
		t.Fatalf("second Close: %v", err)
	}
}

func TestFIFOQueueServesInOrder(t *testing.T) {
	q := newFIFOQueues()
	ctx := context.Background()
	leave0, err := q.join(ctx, "k", nil)
	if err != nil {
		t.Fatal(err)
	}
	order := make(chan int, 3)
	joined := make(chan struct{})
	for i := 1; i <= 3; i++ {
		go func() {
			leave, _ := q.join(ctx, "k", nil)
			order <- i
			leave()
		}()
		// wait until goroutine i is in line before starting the next
		for {
			q.mu.Lock()
			n := len(q.lines["k"])
			q.mu.Unlock()
			if n == i+1 {
				break
			}
			time.Sleep(time.Millisecond)
		}
	}
	close(joined)
	leave0()
	for want := 1; want <= 3; want++ {
		if got := <-order; got != want {
			t.Fatalf("served %d, want %d", got, want)
		}
	}
	// a waiter whose context ends leaves the line without blocking others
	leaveA, _ := q.join(ctx, "k", nil)
	cctx, cancel := context.WithCancel(ctx)
	cancel()
	leaveB, err := q.join(cctx, "k", nil)
	if !errors.Is(err, context.Canceled) {
		t.Fatalf("join with a cancelled context: %v", err)
	}
	leaveB()
	leaveA()
	if len(q.lines) != 0 {
		t.Fatalf("lines left: %v", q.lines)
	}
}

func TestExhaustedTokensAreFinal(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	for _, m := range ms {
		m.Set(keys.Bucket(keys.BucketOf("k", DefaultFenceBuckets)), "9007199254740991") // fencing.MaxToken
	}
	c := miniClient(t, cs)
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	_, err := c.Lock(ctx, "k", 5*time.Second)
	if !errors.Is(err, ErrTokensExhausted) || !errors.Is(err, ErrNotAcquired) || errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Lock with exhausted tokens: %v; want ErrTokensExhausted and ErrNotAcquired", err)
	}
	if ctx.Err() != nil {
		t.Fatal("Lock retried an exhausted key until its context ended")
	}
}

func TestReleaseOfALostLeaseTwice(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	c := miniClient(t, cs)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, m := range ms {
		m.Set("k", "another owner") // taken away behind the lease's back
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("first Release of a lost lease: %v; want ErrLockLost", err)
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrReleased) {
		t.Fatalf("second Release: %v; want ErrReleased", err)
	}
}

// Without release notifications, a waiter still gets the lock, by backoff.
func TestLockWithoutNotificationsUsesBackoff(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	holder, waiter := miniClient(t, cs), miniClient(t, cs, WithReleaseNotifications(false))
	ctx := context.Background()
	lease, err := holder.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
		defer cancel()
		l, err := waiter.Lock(wctx, "k", 5*time.Second)
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	time.Sleep(50 * time.Millisecond)
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter without notifications: %v", err)
	}
	waiter.notifier.mu.Lock()
	started := waiter.notifier.started
	waiter.notifier.mu.Unlock()
	if started {
		t.Fatal("a client without notifications subscribed")
	}
}
