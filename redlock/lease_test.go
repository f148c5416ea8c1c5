package redlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// slowScript is a go-redis hook that delays one script (by its SHA1) by d.
type slowScript struct {
	sha string
	d   time.Duration
}

func (s slowScript) DialHook(next redis.DialHook) redis.DialHook { return next }

func (s slowScript) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if args := cmd.Args(); len(args) > 1 && (args[1] == s.sha) {
			time.Sleep(s.d)
		}
		return next(ctx, cmd)
	}
}

func (s slowScript) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			if args := cmd.Args(); len(args) > 1 && args[1] == s.sha {
				time.Sleep(s.d)
				break
			}
		}
		return next(ctx, cmds)
	}
}

// An Extend whose round outlasts the lease's validity must not report
// success: the lease ended meanwhile.
// On real masters: a lease's watcher starts only when something waits on
// it, so the check is Extend's own (setDeadline against the old validity).
func TestExtendThatOutlastsTheValidityFails(t *testing.T) {
	r := newRig(t, 3)
	for _, rc := range r.clients {
		rc.AddHook(slowScript{sha: extendScript.Hash(), d: 400 * time.Millisecond})
	}
	c := r.client(t, WithMasterTimeout(time.Second))
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 3*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// Shorten the validity behind the lease's back so that it ends during Extend.
	lease.mu.Lock()
	lease.validUntil = time.Now().Add(100 * time.Millisecond)
	lease.mu.Unlock()
	lease.changed <- struct{}{}
	err = lease.Extend(ctx, 3*time.Second)
	if !errors.Is(err, ErrLockLost) {
		t.Fatalf("Extend that ended after ValidUntil: %v; want ErrLockLost", err)
	}
	if lease.Err() == nil {
		t.Fatal("lease still held")
	}
}

// While an auto-renewal is slow, the lease must still end at ValidUntil.
func TestSlowRenewalDoesNotKeepALeasePastValidUntil(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	for _, rc := range cs {
		rc.(*redis.Client).AddHook(slowScript{sha: extendScript.Hash(), d: 2 * time.Second})
	}
	c := miniClient(t, cs, WithMasterTimeout(3*time.Second))
	lease, err := c.TryLock(context.Background(), "k", 4*time.Second, WithAutoExtendInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	lease.mu.Lock()
	lease.validUntil = time.Now().Add(500 * time.Millisecond)
	lease.mu.Unlock()
	lease.changed <- struct{}{}
	select {
	case <-lease.Done():
	case <-time.After(1500 * time.Millisecond): // the renewal takes 2 s
		t.Fatal("Done not closed at ValidUntil while a renewal was under way")
	}
	if !errors.Is(lease.Err(), ErrLockLost) {
		t.Fatalf("Err = %v; want ErrLockLost", lease.Err())
	}
}

func TestCloseWhileLockersWait(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	c := miniClient(t, cs)
	ctx := context.Background()
	held, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	errs := make(chan error, 8)
	for range 8 {
		wg.Go(func() {
			_, err := c.Lock(ctx, "k", 5*time.Second)
			errs <- err
		})
	}
	time.Sleep(50 * time.Millisecond)
	closed := make(chan struct{})
	go func() { _ = c.Close(); close(closed) }()
	select {
	case <-closed:
	case <-time.After(10 * time.Second):
		t.Fatal("Close did not return while lockers waited")
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		if !errors.Is(err, ErrClosed) && !errors.Is(err, ErrNotAcquired) {
			t.Errorf("waiter after Close: %v", err)
		}
	}
	if !errors.Is(held.Err(), ErrClosed) || !errors.Is(context.Cause(held.Context()), ErrClosed) {
		t.Errorf("lease held across Close: Err %v, cause %v; want ErrClosed", held.Err(), context.Cause(held.Context()))
	}
	if err := held.Release(ctx); !errors.Is(err, ErrClosed) {
		t.Errorf("Release after Close: %v; want ErrClosed", err)
	}
}

func TestContextCauseAndErrBothMatch(t *testing.T) {
	cs := newRig(t, 3, onMiniredis()).clients
	c := miniClient(t, cs)
	why := errors.New("shutting down")
	ctx, cancel := context.WithCancelCause(context.Background())
	cancel(why)
	_, err := c.TryLock(ctx, "k", 5*time.Second)
	if !errors.Is(err, context.Canceled) || !errors.Is(err, why) || !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("TryLock with a cancelled context: %v; want Canceled, the cause, and ErrNotAcquired", err)
	}
}
