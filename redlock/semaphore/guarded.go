package semaphore

import (
	"context"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// guarded is the book's semaphore with a lock (Redis in Action, 6.3.3): the
// fair semaphore's two round trips run while holding a short-lived lock on
// the semaphore, taken with package redlock on the one master (waiting at
// most the guard wait; fencing off, since the guard protects nothing
// outside Redis). Acquisitions no longer interleave, so the limit holds
// every time; refresh and release are the fair semaphore's, which need no
// lock. A clock that runs ahead by more than the timeout still expires
// other holders' entries early (the time ZSET is scored by client clocks).
type guarded struct {
	*fair
	locks *redlock.Client
}

func newGuarded(s *Semaphore, rdb redis.UniversalClient, k keys) (*guarded, error) {
	opts := append([]redlock.Option{redlock.WithFencing(false), redlock.WithClock(s.cfg.clock)}, s.cfg.lockOpts...)
	locks, err := redlock.New([]redis.UniversalClient{rdb}, opts...)
	if err != nil {
		return nil, err
	}
	return &guarded{fair: &fair{s: s, rdb: rdb, k: k}, locks: locks}, nil
}

func (g *guarded) acquire(ctx context.Context, id string) (fencing.Token, error) {
	wctx, cancel := context.WithTimeout(ctx, g.s.cfg.guardWait)
	lease, err := g.locks.Lock(wctx, g.k.guard, GuardTTL)
	cancel()
	if err != nil {
		if cerr := ctx.Err(); cerr != nil {
			return 0, fmt.Errorf("%w: guard lock: %w", cerr, err)
		}
		if errors.Is(err, redlock.ErrNoQuorum) || !errors.Is(err, context.DeadlineExceeded) {
			return 0, fmt.Errorf("guard lock: %w", err)
		}
		return 0, fmt.Errorf("%w: %w", contended("guard lock held by another acquirer for more than %v", g.s.cfg.guardWait), err)
	}
	defer func() {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), g.s.masterTimeout())
		_ = lease.Release(rctx)
		cancel()
	}()
	if _, err := g.fair.acquire(ctx, id); err != nil {
		return 0, err
	}
	if lerr := lease.Err(); lerr != nil {
		// The guard ran out during the two round trips: another acquirer may
		// have interleaved. Give the place back rather than trust it.
		_ = g.fair.remove(ctx, id)
		return 0, fmt.Errorf("%w: %w", contended("guard lock lost during the attempt"), lerr)
	}
	return 0, nil
}

func (g *guarded) close() error { return g.locks.Close() }
