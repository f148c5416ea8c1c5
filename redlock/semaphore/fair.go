package semaphore

import (
	"context"
	"errors"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// fair is the book's fair semaphore (Redis in Action, 6.3.2): the time ZSET
// of basic for timeouts, plus an owner ZSET scored by an INCR counter that
// decides who holds.
//
// Round trip 1 (one MULTI): drop timed-out entries from the time ZSET, carry
// that over to the owner ZSET with ZINTERSTORE (weights 1 and 0, so owner
// scores stay counter values), and INCR the counter. Round trip 2 (one
// MULTI): add self to the time ZSET (scored by now) and to the owner ZSET
// (scored by the counter value), take the rank in the owner ZSET; a rank
// below the limit holds, otherwise remove self from both.
//
// Clock skew no longer orders clients, the counter does; but the two round
// trips race: if A increments first and B then adds itself and checks its
// rank before A's second round trip, A's add (with the smaller counter)
// pushes B past the limit without B knowing. Guarded closes that race.
type fair struct {
	s   *Semaphore
	rdb redis.UniversalClient
	k   keys
}

func (f *fair) acquire(ctx context.Context, id string) (fencing.Token, error) {
	now := score(f.s.cfg.now())
	var ctr *redis.IntCmd
	var limit *redis.Cmd
	err := txErr(f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRemRangeByScore(ctx, f.k.holders, "-inf", fmtScore(now-float64(f.s.timeoutMs())))
		limit = p.Eval(ctx, limitSrc, []string{f.k.holders, f.k.limit}, f.s.limitArg())
		p.ZInterStore(ctx, f.k.owner, &redis.ZStore{Keys: []string{f.k.owner, f.k.holders}, Weights: []float64{1, 0}})
		ctr = p.Incr(ctx, f.k.counter)
		return nil
	}))
	if err != nil {
		return 0, err
	}
	if err := f.s.limitReply(limit); err != nil {
		return 0, err // nothing added yet
	}
	f.s.hook()
	var rank *redis.IntCmd
	err = txErr(f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZAdd(ctx, f.k.holders, redis.Z{Score: now, Member: id})
		p.ZAdd(ctx, f.k.owner, redis.Z{Score: float64(ctr.Val()), Member: id})
		rank = p.ZRank(ctx, f.k.owner, id)
		return nil
	}))
	if err != nil {
		// The adds may have run: take them back so that they do not hold a
		// place until they time out.
		return 0, errors.Join(err, f.remove(ctx, id))
	}
	if rank.Val() < int64(f.s.limit) {
		return 0, nil
	}
	if err := f.remove(ctx, id); err != nil {
		return 0, errors.Join(busy("%d permits held", f.s.limit), err)
	}
	return 0, busy("%d permits held", f.s.limit)
}

// remove takes id out of both ZSETs, even when ctx has ended (a left-over
// entry would hold a place until it times out).
func (f *fair) remove(ctx context.Context, id string) error {
	ctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), f.s.masterTimeout())
	defer cancel()
	_, err := f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		p.ZRem(ctx, f.k.holders, id)
		p.ZRem(ctx, f.k.owner, id)
		return nil
	})
	return err
}

// refresh is the book's refresh_fair_semaphore: re-add with the current
// time; if that added the entry, the permit had timed out: remove it and
// report the loss.
func (f *fair) refresh(ctx context.Context, id string) error {
	added, err := f.rdb.ZAdd(ctx, f.k.holders, redis.Z{Score: score(f.s.cfg.now()), Member: id}).Result()
	if err != nil {
		return err
	}
	if added == 1 {
		_ = f.remove(ctx, id)
		return lost("the entry had timed out and been removed")
	}
	return nil
}

func (f *fair) release(ctx context.Context, id string) error {
	var removed *redis.IntCmd
	_, err := f.rdb.TxPipelined(ctx, func(p redis.Pipeliner) error {
		removed = p.ZRem(ctx, f.k.holders, id)
		p.ZRem(ctx, f.k.owner, id)
		p.Publish(ctx, f.k.channel, "1")
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

func (f *fair) holders(ctx context.Context) (int, error) {
	return clientClockHolders(ctx, f.rdb, f.k.holders, f.s)
}

func (f *fair) close() error { return nil }
