package main

import (
	"context"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// releaser is what hold needs of a lease over one or several keys.
type releaser interface {
	Err() error
	Release(ctx context.Context) error
}

// lockAll takes every key, all or nothing, in sorted order (so that buyers
// wanting overlapping keys never deadlock), with Lock one key after the
// other.
func lockAll(ctx context.Context, c *redlock.Client, keys []string, ttl time.Duration) (releaser, error) {
	keys = slices.Sorted(slices.Values(keys))
	var held multiLease
	for _, k := range keys {
		l, err := c.Lock(ctx, k, ttl)
		if err != nil {
			_ = held.Release(context.WithoutCancel(ctx))
			return nil, err
		}
		held = append(held, l)
	}
	return held, nil
}

type multiLease []*redlock.Lease

func (ls multiLease) Err() error {
	for _, l := range ls {
		if err := l.Err(); err != nil {
			return err
		}
	}
	return nil
}

func (ls multiLease) Release(ctx context.Context) error {
	var first error
	for i := len(ls) - 1; i >= 0; i-- {
		if err := ls[i].Release(ctx); err != nil && first == nil {
			first = err
		}
	}
	return first
}
