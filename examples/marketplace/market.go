package main

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/redis/go-redis/v9"
)

// ErrNotConserved is matched by the error Check returns when items or funds
// were lost or duplicated.
var ErrNotConserved = errors.New("marketplace: not conserved")

// Market is the book's data model under one key prefix on one Redis.
type Market struct {
	rdb    *redis.Client
	prefix string

	listers, buyers int
	itemsPerLister  int
	funds           int64 // every user's starting funds
}

func (m *Market) marketKey() string        { return m.prefix + "market:" }
func (m *Market) userKey(u string) string  { return m.prefix + "users:" + u }
func (m *Market) invKey(u string) string   { return m.prefix + "inventory:" + u }
func (m *Market) itemLock(i string) string { return m.prefix + "lock:market:" + i }
func (m *Market) fundsLock(u string) string {
	return m.prefix + "lock:users:" + u
}
func (m *Market) marketLock() string { return m.prefix + "lock:market:" }

func seller(i int) string          { return "seller" + strconv.Itoa(i) }
func buyer(j int) string           { return "buyer" + strconv.Itoa(j) }
func itemID(i, n int) string       { return "item" + strconv.Itoa(i) + "_" + strconv.Itoa(n) }
func member(item, s string) string { return item + "." + s }

// splitMember is the inverse of member.
func splitMember(m string) (item, s string, ok bool) {
	i := strings.LastIndexByte(m, '.')
	if i < 0 {
		return "", "", false
	}
	return m[:i], m[i+1:], true
}

func (m *Market) users() []string {
	var us []string
	for i := range m.listers {
		us = append(us, seller(i))
	}
	for j := range m.buyers {
		us = append(us, buyer(j))
	}
	return us
}

// Seed gives every lister itemsPerLister items and every user m.funds.
func (m *Market) Seed(ctx context.Context) error {
	for _, u := range m.users() {
		if err := m.rdb.HSet(ctx, m.userKey(u), "name", u, "funds", m.funds).Err(); err != nil {
			return fmt.Errorf("seed %s: %w", u, err)
		}
	}
	const batch = 1000
	for i := range m.listers {
		for n := 0; n < m.itemsPerLister; n += batch {
			items := make([]any, 0, batch)
			for k := n; k < min(n+batch, m.itemsPerLister); k++ {
				items = append(items, itemID(i, k))
			}
			if err := m.rdb.SAdd(ctx, m.invKey(seller(i)), items...).Err(); err != nil {
				return fmt.Errorf("seed inventory of %s: %w", seller(i), err)
			}
		}
	}
	return nil
}

// Balance is what Check found.
type Balance struct {
	Funds     int64 // all users' funds together
	SellerGot int64 // the sellers' funds above their start
	OnMarket  int
	Bought    int // items in buyers' inventories
}

// Check verifies conservation after a run in which sold sales worth soldValue
// and listed listings succeeded: every item exists exactly once (on the
// market or in one inventory), every coin still exists, the sellers gained
// exactly what buyers paid, and the counts match. Its errors match
// ErrNotConserved (or are Redis errors).
func (m *Market) Check(ctx context.Context, listed, sold int, soldValue int64) (Balance, error) {
	var b Balance
	seen := make(map[string]string, m.listers*m.itemsPerLister)
	where := func(item, place string) error {
		if prev, dup := seen[item]; dup {
			return fmt.Errorf("%w: item %s is both in %s and in %s", ErrNotConserved, item, prev, place)
		}
		seen[item] = place
		return nil
	}
	mkt, err := m.rdb.ZRange(ctx, m.marketKey(), 0, -1).Result()
	if err != nil {
		return b, err
	}
	for _, mem := range mkt {
		item, _, ok := splitMember(mem)
		if !ok {
			return b, fmt.Errorf("%w: malformed market member %q", ErrNotConserved, mem)
		}
		if err := where(item, "the market"); err != nil {
			return b, err
		}
	}
	b.OnMarket = len(mkt)
	for _, u := range m.users() {
		items, err := m.rdb.SMembers(ctx, m.invKey(u)).Result()
		if err != nil {
			return b, err
		}
		for _, item := range items {
			if err := where(item, "the inventory of "+u); err != nil {
				return b, err
			}
		}
		if strings.HasPrefix(u, "buyer") {
			b.Bought += len(items)
		}
		f, err := m.rdb.HGet(ctx, m.userKey(u), "funds").Int64()
		if err != nil {
			return b, fmt.Errorf("funds of %s: %w", u, err)
		}
		b.Funds += f
		if strings.HasPrefix(u, "seller") {
			b.SellerGot += f - m.funds
		}
	}
	for i := range m.listers {
		for n := range m.itemsPerLister {
			if _, ok := seen[itemID(i, n)]; !ok {
				return b, fmt.Errorf("%w: item %s is nowhere", ErrNotConserved, itemID(i, n))
			}
		}
	}
	switch want := int64(m.listers+m.buyers) * m.funds; {
	case len(seen) != m.listers*m.itemsPerLister:
		return b, fmt.Errorf("%w: %d items exist, %d were made", ErrNotConserved, len(seen), m.listers*m.itemsPerLister)
	case b.Funds != want:
		return b, fmt.Errorf("%w: %d coins exist, %d were given out", ErrNotConserved, b.Funds, want)
	case b.SellerGot != soldValue:
		return b, fmt.Errorf("%w: sellers gained %d, buyers paid %d", ErrNotConserved, b.SellerGot, soldValue)
	case b.Bought != sold:
		return b, fmt.Errorf("%w: buyers hold %d items, %d sales were made", ErrNotConserved, b.Bought, sold)
	case b.OnMarket != listed-sold:
		return b, fmt.Errorf("%w: %d items on the market, %d listed and %d sold", ErrNotConserved, b.OnMarket, listed, sold)
	}
	return b, nil
}

// Clear deletes every key under the market's prefix (lock keys included).
func (m *Market) Clear(ctx context.Context) error {
	iter := m.rdb.Scan(ctx, 0, m.prefix+"*", 1000).Iterator()
	var keys []string
	for iter.Next(ctx) {
		keys = append(keys, iter.Val())
		if len(keys) == 1000 {
			if err := m.rdb.Unlink(ctx, keys...).Err(); err != nil {
				return err
			}
			keys = keys[:0]
		}
	}
	if err := iter.Err(); err != nil {
		return err
	}
	if len(keys) > 0 {
		return m.rdb.Unlink(ctx, keys...).Err()
	}
	return nil
}
