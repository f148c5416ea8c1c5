package bench

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/bsm/redislock"
	"github.com/go-redsync/redsync/v4"
	rsredis "github.com/go-redsync/redsync/v4/redis"
	"github.com/go-redsync/redsync/v4/redis/goredis/v9"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// locker is one library behind the interface the load loops use.
type locker interface {
	// lock takes key for the TTL: one attempt when wait is false, retries
	// with the library's own policy until ctx ends when wait is true.
	lock(ctx context.Context, key string, wait bool) (held, error)
	close() error
}

// held is an acquired lock.
type held interface {
	release(ctx context.Context) error
}

// newLocker builds library name over the masters' go-redis clients.
func newLocker(name string, rdbs []*redis.Client, ttl time.Duration) (locker, error) {
	switch name {
	case Quorumlock, QuorumlockLock, QuorumlockNoFencing, QuorumlockTolerant, QuorumlockB16, QuorumlockB65536:
		uc := make([]redis.UniversalClient, len(rdbs))
		for i, r := range rdbs {
			uc[i] = r
		}
		opts := []redlock.Option{redlock.WithFencing(name != QuorumlockNoFencing)}
		switch name {
		case QuorumlockB16:
			opts = append(opts, redlock.WithFenceBuckets(16))
		case QuorumlockB65536:
			opts = append(opts, redlock.WithFenceBuckets(65536))
		case QuorumlockTolerant:
			opts = append(opts, redlock.WithDataLossTolerance(1))
		}
		c, err := redlock.New(uc, opts...)
		if err != nil {
			return nil, fmt.Errorf("redlock.New: %w", err)
		}
		return &qlLocker{c: c, ttl: ttl, alwaysLock: name == QuorumlockLock}, nil
	case Redsync, RedsyncFailFast:
		pools := make([]rsredis.Pool, len(rdbs))
		for i, r := range rdbs {
			pools[i] = goredis.NewPool(r)
		}
		return &rsLocker{rs: redsync.New(pools...), ttl: ttl, failFast: name == RedsyncFailFast}, nil
	case Redislock:
		return &rlLocker{c: redislock.New(rdbs[0]), ttl: ttl}, nil
	case Raw:
		return &rawLocker{rdbs: rdbs, ttl: ttl, quorum: len(rdbs)/2 + 1}, nil
	}
	return nil, invalid("unknown library %q", name)
}

type qlLocker struct {
	c          *redlock.Client
	ttl        time.Duration
	alwaysLock bool // Lock even for one attempt: what users call
}

func (q *qlLocker) lock(ctx context.Context, key string, wait bool) (held, error) {
	var (
		l   *redlock.Lease
		err error
	)
	if wait || q.alwaysLock {
		l, err = q.c.Lock(ctx, key, q.ttl)
	} else {
		l, err = q.c.TryLock(ctx, key, q.ttl)
	}
	if err != nil {
		return nil, err
	}
	return qlHeld{l}, nil
}

func (q *qlLocker) close() error { return q.c.Close() }

type qlHeld struct{ l *redlock.Lease }

func (h qlHeld) release(ctx context.Context) error { return h.l.Release(ctx) }

// rsLocker uses one Mutex per acquisition: a redsync Mutex is not safe for
// concurrent use, and NewMutex only fills a struct.
type rsLocker struct {
	rs       *redsync.Redsync
	ttl      time.Duration
	failFast bool
}

func (r *rsLocker) lock(ctx context.Context, key string, wait bool) (held, error) {
	m := r.rs.NewMutex(key, redsync.WithExpiry(r.ttl), redsync.WithFailFast(r.failFast))
	var err error
	if wait {
		err = m.LockContext(ctx)
	} else {
		err = m.TryLockContext(ctx)
	}
	if err != nil {
		return nil, err
	}
	return rsHeld{m}, nil
}

func (r *rsLocker) close() error { return nil }

type rsHeld struct{ m *redsync.Mutex }

var errNotReleased = errors.New("bench: release reported the lock was not held")

func (h rsHeld) release(ctx context.Context) error {
	ok, err := h.m.UnlockContext(ctx)
	if err == nil && !ok {
		err = errNotReleased
	}
	return err
}

// rlLocker is bsm/redislock on one master. Waiting uses its exponential
// backoff from 16 ms (its recommended minimum) up to 512 ms.
type rlLocker struct {
	c   *redislock.Client
	ttl time.Duration
}

func (r *rlLocker) lock(ctx context.Context, key string, wait bool) (held, error) {
	opt := &redislock.Options{RetryStrategy: redislock.NoRetry()}
	if wait {
		opt.RetryStrategy = redislock.ExponentialBackoff(16*time.Millisecond, 512*time.Millisecond)
	}
	l, err := r.c.Obtain(ctx, key, r.ttl, opt)
	if err != nil {
		return nil, err
	}
	return rlHeld{l}, nil
}

func (r *rlLocker) close() error { return nil }

type rlHeld struct{ l *redislock.Lock }

func (h rlHeld) release(ctx context.Context) error { return h.l.Release(ctx) }
