package semaphore

import (
	"context"
	"errors"
	"fmt"
	"strconv"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// atomicOne is the Atomic semaphore on one master: each acquisition,
// refresh and release is one Lua script, scored with the server's TIME, so
// neither client clock skew nor interleaved round trips can over-admit. An
// acquisition drops timed-out entries, admits when fewer than limit remain,
// and takes a fencing token from the semaphore's counter.
type atomicOne struct {
	s   *Semaphore
	rdb redis.UniversalClient
	k   keys
}

func (a *atomicOne) acquire(ctx context.Context, id string) (fencing.Token, error) {
	a.s.hook()
	res, err := acquireScript.Run(ctx, a.rdb, []string{a.k.holders, a.k.tokens, a.k.fence, a.k.limit},
		id, a.s.limitArg(), a.s.timeoutMs(), uint64(fencing.MaxToken)).Slice()
	if err != nil {
		return 0, err
	}
	if len(res) != 2 {
		return 0, fmt.Errorf("acquire script returned %d values, want 2", len(res))
	}
	ok, ok1 := res[0].(int64)
	val, ok2 := res[1].(string)
	if !ok1 || !ok2 {
		return 0, fmt.Errorf("acquire script returned %T, %T", res[0], res[1])
	}
	switch ok {
	case 0:
		return 0, busy("%s permits held", val)
	case -1:
		return 0, limitMismatch(a.s.name, a.s.limit, val, oneMasterLimitChange)
	case -2:
		return 0, fmt.Errorf("%w: the fencing counter %s is at %s", redlock.ErrTokensExhausted, a.k.fence, val)
	}
	t, err := strconv.ParseUint(val, 10, 64)
	if err != nil || t == 0 || fencing.Token(t) > fencing.MaxToken {
		// Admitted with a token nobody can use: give the place back at once
		// rather than hold it for a whole timeout.
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), a.s.masterTimeout())
		defer cancel()
		return 0, errors.Join(fmt.Errorf("fencing token %q is not an integer in [1, 2^53)", val), a.release(rctx, id))
	}
	return fencing.Token(t), nil
}

func (a *atomicOne) refresh(ctx context.Context, id string) error {
	n, err := refreshScript.Run(ctx, a.rdb, []string{a.k.holders, a.k.tokens}, id, a.s.timeoutMs()).Int64()
	if err != nil {
		return err
	}
	if n != 1 {
		return lost("the permit had timed out or been removed on the master")
	}
	return nil
}

func (a *atomicOne) release(ctx context.Context, id string) error {
	n, err := releaseScript.Run(ctx, a.rdb, []string{a.k.holders, a.k.tokens}, id, a.s.timeoutMs(), a.k.channel).Int64()
	if err != nil {
		return err
	}
	if n != 1 {
		return lost("the permit had timed out or been removed on the master")
	}
	return nil
}

func (a *atomicOne) holders(ctx context.Context) (int, error) {
	n, err := holdersScript.Run(ctx, a.rdb, []string{a.k.holders}, a.s.timeoutMs()).Int64()
	return int(n), err
}

func (a *atomicOne) close() error { return nil }
