package main

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

var (
	// errGone: the item left the market, or its price changed, before the
	// buyer could pay for it (another buyer was first). Not a retry.
	errGone = errors.New("item no longer listed at that price")
	// errFunds: the buyer cannot pay the price.
	errFunds = errors.New("not enough funds")
	// errNotOwned: the item is not in the seller's inventory.
	errNotOwned = errors.New("item not in the seller's inventory")
	// errLost: the lock's lease ended before the writes were sent.
	errLost = errors.New("lock lost before the writes")
)

// strategy lists and buys one item. ctx bounds the wait (retries, locks);
// the Redis commands themselves run under dctx, never cancelled half-way,
// so that a sale that EXEC applied is always counted.
type strategy interface {
	list(ctx, dctx context.Context, s, item string, price int64) (retries int, err error)
	buy(ctx, dctx context.Context, b, s, item string, price int64) (retries int, err error)
	close() error
}

func (m *Market) listWrites(ctx context.Context, p redis.Pipeliner, s, item string, price int64) {
	p.ZAdd(ctx, m.marketKey(), redis.Z{Score: float64(price), Member: member(item, s)})
	p.SRem(ctx, m.invKey(s), item)
}

func (m *Market) buyWrites(ctx context.Context, p redis.Pipeliner, b, s, item string, price int64) {
	p.HIncrBy(ctx, m.userKey(s), "funds", price)
	p.HIncrBy(ctx, m.userKey(b), "funds", -price)
	p.SAdd(ctx, m.invKey(b), item)
	p.ZRem(ctx, m.marketKey(), member(item, s))
}

// canBuy reads the item's price and the buyer's funds.
func (m *Market) canBuy(ctx context.Context, c redis.Cmdable, b, s, item string, price int64) error {
	got, err := c.ZScore(ctx, m.marketKey(), member(item, s)).Result()
	if errors.Is(err, redis.Nil) || (err == nil && int64(got) != price) {
		return errGone
	}
	if err != nil {
		return err
	}
	funds, err := c.HGet(ctx, m.userKey(b), "funds").Int64()
	if err != nil {
		return fmt.Errorf("funds of %s: %w", b, err)
	}
	if funds < price {
		return errFunds
	}
	return nil
}

// watchStrategy is the book's optimistic version: WATCH the keys read,
// MULTI/EXEC the writes, start over when EXEC aborts.
type watchStrategy struct{ m *Market }

func (w watchStrategy) list(ctx, dctx context.Context, s, item string, price int64) (int, error) {
	m := w.m
	inv := m.invKey(s)
	return retryAborted(ctx, func() error {
		return m.rdb.Watch(dctx, func(tx *redis.Tx) error {
			owned, err := tx.SIsMember(dctx, inv, item).Result()
			if err != nil {
				return err
			}
			if !owned {
				return errNotOwned
			}
			_, err = tx.TxPipelined(dctx, func(p redis.Pipeliner) error {
				m.listWrites(dctx, p, s, item, price)
				return nil
			})
			return err
		}, inv)
	})
}

func (w watchStrategy) buy(ctx, dctx context.Context, b, s, item string, price int64) (int, error) {
	m := w.m
	return retryAborted(ctx, func() error {
		return m.rdb.Watch(dctx, func(tx *redis.Tx) error {
			if err := m.canBuy(dctx, tx, b, s, item, price); err != nil {
				return err
			}
			_, err := tx.TxPipelined(dctx, func(p redis.Pipeliner) error {
				m.buyWrites(dctx, p, b, s, item, price)
				return nil
			})
			return err
		}, m.marketKey(), m.userKey(b))
	})
}

func (watchStrategy) close() error { return nil }

// retryAborted runs f until it does not end in an aborted EXEC, or ctx ends.
func retryAborted(ctx context.Context, f func() error) (int, error) {
	for retries := 0; ; retries++ {
		err := f()
		if !errors.Is(err, redis.TxFailedErr) {
			return retries, err
		}
		if ctx.Err() != nil {
			return retries, ctx.Err()
		}
	}
}

// lockStrategy holds quorumlock locks around plain reads and one MULTI/EXEC
// of the writes: the coarse one locks the whole market, the fine one the
// item (and, to buy, the buyer's funds too, both taken by LockAll).
type lockStrategy struct {
	m    *Market
	c    *redlock.Client
	ttl  time.Duration
	fine bool
}

// hold runs f under a lease over keys. f calls held just before its
// MULTI/EXEC: a lease that ended (its validity ran out, a holder paused
// past its TTL) writes nothing.
func (l *lockStrategy) hold(ctx, dctx context.Context, keys []string, f func(held func() error) error) (int, error) {
	retries := 0
	for {
		// One key or several, all or nothing, in one global order: buyers
		// wanting overlapping keys never deadlock.
		lease, err := l.c.LockAll(ctx, keys, l.ttl)
		if err != nil {
			if ctx.Err() != nil {
				return retries, ctx.Err()
			}
			retries++ // e.g. no quorum for a moment: try again
			continue
		}
		err = f(func() error {
			if lerr := lease.Err(); lerr != nil {
				return fmt.Errorf("%w: %w", errLost, lerr)
			}
			return nil
		})
		rctx, cancel := context.WithTimeout(dctx, 5*time.Second)
		_ = lease.Release(rctx) // a lease that cannot be released expires
		cancel()
		return retries, err
	}
}

func (l *lockStrategy) list(ctx, dctx context.Context, s, item string, price int64) (int, error) {
	m := l.m
	key := m.marketLock()
	if l.fine {
		key = m.itemLock(item)
	}
	return l.hold(ctx, dctx, []string{key}, func(held func() error) error {
		owned, err := m.rdb.SIsMember(dctx, m.invKey(s), item).Result()
		if err != nil {
			return err
		}
		if !owned {
			return errNotOwned
		}
		if err := held(); err != nil {
			return err
		}
		_, err = m.rdb.TxPipelined(dctx, func(p redis.Pipeliner) error {
			m.listWrites(dctx, p, s, item, price)
			return nil
		})
		return err
	})
}

func (l *lockStrategy) buy(ctx, dctx context.Context, b, s, item string, price int64) (int, error) {
	m := l.m
	keys := []string{m.marketLock()}
	if l.fine {
		keys = []string{m.itemLock(item), m.fundsLock(b)}
	}
	return l.hold(ctx, dctx, keys, func(held func() error) error {
		if err := m.canBuy(dctx, m.rdb, b, s, item, price); err != nil {
			return err
		}
		if err := held(); err != nil {
			return err
		}
		_, err := m.rdb.TxPipelined(dctx, func(p redis.Pipeliner) error {
			m.buyWrites(dctx, p, b, s, item, price)
			return nil
		})
		return err
	})
}

func (l *lockStrategy) close() error { return l.c.Close() }
