package semaphore

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// basic is the book's first semaphore (Redis in Action, 6.3.1): one ZSET of
// permit identifiers scored by the acquiring client's wall clock.
//
// An attempt is one MULTI: drop entries older than the timeout, add self
// scored by now, take the rank; a rank below the limit holds, otherwise the
// client removes its entry again. Every client's clock is trusted: an entry
// scored by a clock that runs ahead sorts after entries added later by
// clients with slower clocks, so such a later caller ranks below the limit
// and takes the place the fast client believes it holds (the steal). The
// fast client is not told. Right for soft caps where overshooting for a
// moment is harmless; wrong for a hard external limit.
type basic struct {
	s   *Semaphore
	rdb redis.UniversalClient
	k   keys
}

// score is a wall-clock time in milliseconds (with fraction), the book's
// time.time() in a finer unit.
func score(t time.Time) float64 { return float64(t.UnixNano()) / 1e6 }

func fmtScore(f float64) string { return strconv.FormatFloat(f, 'f', -1, 64) }

func (b *basic) acquire(ctx context.Context, id string) (fencing.Token, error) {
	now := score(b.s.cfg.now())
	var rank *redis.IntCmd
	var limit *redis.Cmd
	err := txErr(b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, b.k.holders, "-inf", fmtScore(now-float64(b.s.timeoutMs())))
		limit = p.Eval(ctx, limitSrc, []string{b.k.holders, b.k.limit}, b.s.limitArg())
		p.ZAdd(ctx, b.k.holders, redis.Z{Score: now, Member: id})
		rank = p.ZRank(ctx, b.k.holders, id)
		return nil
	}))
	if err != nil {
		// The add may have run: take it back.
		return 0, errors.Join(err, b.remove(ctx, id))
	}
	if err := b.s.limitReply(limit); err != nil {
		return 0, errors.Join(err, b.remove(ctx, id))
	}
	if r := rank.Val(); r < int64(b.s.limit) {
		return 0, nil
	}
	if err := b.remove(ctx, id); err != nil {
		return 0, errors.Join(busy("%d permits held", b.s.limit), err)
	}
	return 0, busy("%d permits held", b.s.limit)
}

// txErr is the error of a MULTI/EXEC: when EXEC answered EXECABORT (a
// command was refused while queued: NOPERM, an unknown command), the
// refused command's reply first, which says why (and whether waiting
// changes it: see Acquire), then the EXECABORT.
func txErr(cmds []redis.Cmder, err error) error {
	if err == nil || !strings.HasPrefix(err.Error(), "EXECABORT") {
		return err
	}
	for _, c := range cmds {
		if cerr := c.Err(); cerr != nil && !strings.HasPrefix(cerr.Error(), "EXECABORT") {
			return fmt.Errorf("%s: %w (%w)", c.Name(), cerr, err)
		}
	}
	return err
}

// remove takes id out of the ZSET, even when ctx has ended: a left-over
// entry holds a place until it times out.
func (b *basic) remove(ctx context.Context, id string) error {
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.s.masterTimeout())
	defer cancel()
	return b.rdb.ZRem(rctx, b.k.holders, id).Err()
}

// refresh re-adds the entry with the current time; if that added it (rather
// than updating it), the permit had already timed out and been removed: take
// it out again and report the loss.
func (b *basic) refresh(ctx context.Context, id string) error {
	added, err := b.rdb.ZAdd(ctx, b.k.holders, redis.Z{Score: score(b.s.cfg.now()), Member: id}).Result()
	if err != nil {
		return err
	}
	if added == 1 {
		_ = b.rdb.ZRem(ctx, b.k.holders, id).Err()
		return lost("the entry had timed out and been removed")
	}
	return nil
}

func (b *basic) release(ctx context.Context, id string) error {
	var removed *redis.IntCmd
	_, err := b.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		removed = p.ZRem(ctx, b.k.holders, id)
		p.Publish(ctx, b.k.channel, "1")
		return nil
	})
	if err != nil {
		return err
	}
	if removed.Val() == 0 {
		return lost("the entry had timed out and been removed")
	}
	return nil
}

func (b *basic) holders(ctx context.Context) (int, error) {
	return clientClockHolders(ctx, b.rdb, b.k.holders, b.s)
}

func (b *basic) close() error { return nil }

// clientClockHolders counts the entries of a client-clock-scored ZSET not
// older than the timeout by this client's clock.
func clientClockHolders(ctx context.Context, rdb redis.UniversalClient, key string, s *Semaphore) (int, error) {
	min := "(" + fmtScore(score(s.cfg.now())-float64(s.timeoutMs()))
	n, err := rdb.ZCount(ctx, key, min, "+inf").Result()
	return int(n), err
}
