package semaphore

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"time"

	"github.com/cenkalti/backoff/v4"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// Acquire takes a permit, waiting until one frees or ctx ends.
//
// Waiters are woken when a permit is released: every release publishes on
// the semaphore's channel(s), and a Semaphore keeps one subscription per
// master, opened on the first Acquire and shared by all its waiters. Behind
// that, jittered exponential backoff (WithRetry) covers permits that time
// out without a release and notifications that are lost. Waiters are not
// served in order.
//
// Errors: ErrInvalidArgument, ErrClosed; when ctx ends, an error matching
// ctx's error and the last attempt's (usually ErrBusy).
func (s *Semaphore) Acquire(ctx context.Context) (*Permit, error) {
	b := s.cfg.newBackOff()
	b.Reset()
	for {
		woken := s.waiter.current() // before the attempt: a release during it is not missed
		began := s.cfg.clock.Now()
		p, err := s.TryAcquire(ctx)
		if err == nil {
			return p, nil
		}
		if !retryable(ctx, err) {
			return nil, err
		}
		took := s.cfg.clock.Now().Sub(began)
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		t := s.cfg.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		case <-s.closing:
			t.Stop()
			return nil, ErrClosed
		case <-woken:
			t.Stop()
			if s.slots != nil {
				// Every waiter wakes on the same release; on several masters
				// attempts that pick the same slot all but one fail, so spread
				// them over up to two attempt durations.
				if !s.sleep(ctx, time.Duration(rand.Int64N(int64(2*took)+1))) {
					return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
				}
			}
		case <-t.C():
		}
	}
}

// retryable reports whether Acquire tries again after err.
func retryable(ctx context.Context, err error) bool {
	switch {
	case ctx.Err() != nil,
		errors.Is(err, ErrClosed),
		errors.Is(err, ErrInvalidArgument),
		errors.Is(err, redlock.ErrTokensExhausted):
		return false
	}
	return true
}

// sleep waits d on the semaphore's clock; false when ctx ended first.
func (s *Semaphore) sleep(ctx context.Context, d time.Duration) bool {
	if d <= 0 {
		return ctx.Err() == nil
	}
	t := s.cfg.clock.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
		return false
	case <-t.C():
		return true
	}
}

// waiter wakes Acquire calls when a permit is released. It subscribes on
// every master to the semaphore's release channel(s) (the first time
// somebody waits) and closes the current wake channel on every message. A
// missed message costs only latency: Acquire also backs off and retries.
type waiter struct {
	s        *Semaphore
	masters  []redis.UniversalClient
	channels []string

	mu      sync.Mutex
	wake    chan struct{}
	subs    []*redis.PubSub
	started bool
	closed  bool
}

func newWaiter(s *Semaphore, masters []redis.UniversalClient, channels []string) *waiter {
	return &waiter{s: s, masters: masters, channels: channels, wake: make(chan struct{})}
}

// current returns the channel the next release closes, subscribing first if
// nobody has waited yet.
func (w *waiter) current() <-chan struct{} {
	w.mu.Lock()
	defer w.mu.Unlock()
	if !w.started && !w.closed {
		w.started = true
		for _, m := range w.masters {
			ps := m.Subscribe(context.Background()) // no channels yet: no round trip here
			w.subs = append(w.subs, ps)
			w.s.goBackground(func() { w.listen(ps) })
		}
	}
	return w.wake
}

// listen subscribes one master's connection (off the caller's path: a
// stalled master must not block a waiter) and signals every message until
// the subscription is closed.
func (w *waiter) listen(ps *redis.PubSub) {
	ctx, cancel := context.WithTimeout(context.Background(), w.s.masterTimeout())
	_ = ps.Subscribe(ctx, w.channels...) // on failure the channel reconnects and resubscribes
	cancel()
	ch := ps.Channel()
	for {
		select {
		case <-w.s.closing:
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			w.signal()
		}
	}
}

func (w *waiter) signal() {
	w.mu.Lock()
	defer w.mu.Unlock()
	close(w.wake)
	w.wake = make(chan struct{})
}

// close ends the subscriptions.
func (w *waiter) close() {
	w.mu.Lock()
	defer w.mu.Unlock()
	w.closed = true
	for _, ps := range w.subs {
		_ = ps.Close()
	}
}
