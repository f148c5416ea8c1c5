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
// master, opened on the first Acquire and shared by all its waiters. Each
// message wakes one waiter of each Semaphore, the longest waiting, so that a
// release does not send every waiter at the master at once. Behind that,
// jittered exponential backoff (WithRetry) covers permits that time out
// without a release and notifications that are lost. Waiters of different
// Semaphores (processes) are not served in order.
//
// Errors: ErrInvalidArgument, ErrClosed; at once, an error matching
// redlock.ErrMisconfigured when the master (on several masters, so many
// that no majority is possible) refuses the semaphore's commands for a
// reason waiting does not change: an ACL without a command, key pattern or
// channel it needs (NOPERM), wrong credentials (NOAUTH, WRONGPASS), a value
// of another type at one of its keys (WRONGTYPE), a command renamed away;
// redlock.ErrTokensExhausted at once; when ctx ends, an error matching
// ctx's error and the last attempt's (usually ErrBusy). Everything else
// (a full semaphore, too few masters answering, a busy or out-of-memory
// master) is tried again.
func (s *Semaphore) Acquire(ctx context.Context) (*Permit, error) {
	woken, leave := s.waiter.join() // before the first attempt: a release during it is not missed
	defer leave()
	b := s.cfg.newBackOff()
	b.Reset()
	var busy error // the last attempt that found the semaphore full
	for {
		if !s.enterGate(ctx) {
			return nil, fmt.Errorf("semaphore %q: %w", s.name, ctx.Err())
		}
		began := s.cfg.clock.Now()
		p, err := s.TryAcquire(ctx)
		s.leaveGate()
		if err == nil {
			return p, nil
		}
		if errors.Is(err, ErrBusy) {
			busy = err
		}
		if !retryable(ctx, err) {
			if ctx.Err() != nil && busy != nil && !errors.Is(err, ErrBusy) {
				// ctx ended during an attempt: say what the semaphore was.
				return nil, fmt.Errorf("%w: %w", err, busy)
			}
			return nil, err
		}
		took := s.cfg.clock.Now().Sub(began)
		if errors.Is(err, errContended) {
			// Lost a race for a place that may still be free (a split vote, a
			// busy guard): try again soon, after a random delay of up to two
			// attempt durations so that the racers spread apart.
			if !s.sleep(ctx, time.Duration(rand.Int64N(int64(2*took)+1))) {
				return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
			}
			continue
		}
		d := b.NextBackOff()
		if d == backoff.Stop {
			return nil, err
		}
		t := s.cfg.clock.NewTimer(d)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, fmt.Errorf("%w: %w", ctx.Err(), err)
		case <-s.closing():
			t.Stop()
			return nil, ErrClosed
		case <-woken:
			t.Stop()
		case <-t.C():
		}
	}
}

// enterGate waits for this Semaphore's turn to attempt, on several masters:
// there the Acquire calls of one Semaphore attempt one at a time, as a
// redlock.Client's waiters for one key do, because concurrent attempts on the
// same free slot split the masters' votes and all fail. False when ctx ended.
func (s *Semaphore) enterGate(ctx context.Context) bool {
	if s.gate == nil {
		return true
	}
	select {
	case s.gate <- struct{}{}:
		return true
	case <-ctx.Done():
		return false
	}
}

func (s *Semaphore) leaveGate() {
	if s.gate != nil {
		<-s.gate
	}
}

// retryable reports whether Acquire tries again after err: not after ctx's
// end, Close, a bad argument, exhausted tokens, or masters that refuse the
// commands for good (redlock.ErrMisconfigured).
func retryable(ctx context.Context, err error) bool {
	switch {
	case ctx.Err() != nil,
		errors.Is(err, ErrClosed),
		errors.Is(err, ErrInvalidArgument),
		errors.Is(err, redlock.ErrTokensExhausted),
		errors.Is(err, redlock.ErrMisconfigured):
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
// somebody waits) and, per message, wakes the longest-waiting Acquire that
// has not been woken yet. A missed message costs only latency: Acquire also
// backs off and retries.
type waiter struct {
	s        *Semaphore
	masters  []redis.UniversalClient
	channels []string

	mu      sync.Mutex
	line    []chan struct{} // the waiting Acquire calls, oldest first; each buffered 1
	subs    []*redis.PubSub
	started bool
	closed  bool
}

func newWaiter(s *Semaphore, masters []redis.UniversalClient, channels []string) *waiter {
	return &waiter{s: s, masters: masters, channels: channels}
}

// join puts an Acquire call in line, subscribing first if nobody has waited
// yet. The channel receives when a release wakes it; leave takes it out.
func (w *waiter) join() (<-chan struct{}, func()) {
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
	ch := make(chan struct{}, 1)
	w.line = append(w.line, ch)
	return ch, func() {
		w.mu.Lock()
		defer w.mu.Unlock()
		for i, c := range w.line {
			if c == ch {
				w.line = append(w.line[:i], w.line[i+1:]...)
				break
			}
		}
		select {
		case <-ch: // woken but leaving: pass the wake on
			w.signalLocked()
		default:
		}
	}
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
		case <-w.s.closing():
			return
		case _, ok := <-ch:
			if !ok {
				return
			}
			w.mu.Lock()
			w.signalLocked()
			w.mu.Unlock()
		}
	}
}

// signalLocked wakes the longest-waiting call not woken yet.
func (w *waiter) signalLocked() {
	for _, c := range w.line {
		select {
		case c <- struct{}{}:
			return
		default:
		}
	}
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
