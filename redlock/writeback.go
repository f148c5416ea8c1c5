package redlock

import (
	"context"
	"fmt"
	"math/rand/v2"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// writeBackResult is round 2's outcome: the token written on a majority, or
// token 0 with the failure's kind and the context's error if it ended the
// round; errs has the masters' errors either way.
type writeBackResult struct {
	token fencing.Token
	kind  error
	cause error
	errs  []error
}

// writeBackTries bounds the write-back rounds of one attempt: a master whose
// counter is at or above the token (another key of the bucket, or a sync,
// raised it) makes the round run again above it, while the lease's validity
// lasts (until), at most this many times.
const writeBackTries = 10

// writeBack is round 2: raise the key's bucket counter to token on the
// granting masters where value still owns key, until a majority agreed.
// Confirmations count like grants: q from masters that count by themselves
// (rule V, judged by each confirmation's own certificate and lineage), or
// one from every master. Counting an uncertified master's ok otherwise lets
// a later fast path reuse the token (the spin model's counterexample,
// docs/fencing-model.md). When a master reports a counter at or above token,
// the round is run again with a token above it, skipping a random few more
// values each time (tokens may skip values), so that keys of one bucket
// racing for its counter stop proposing the same next value; no round
// starts once the lease's validity (until) is over.
func (c *Client) writeBack(ctx context.Context, key, value string, granted []int, token fencing.Token, timeout time.Duration, until time.Time) writeBackResult {
	names := []string{key, keys.Bucket(keys.BucketOf(key, c.cfg.buckets)), keys.Cert, keys.Incarnation}
	var res writeBackResult
	for try := range writeBackTries {
		if try > 0 && !c.cfg.clock.Now().Before(until) {
			break // no validity left for this token: the attempt fails as contended
		}
		if token > fencing.MaxToken {
			res.kind = ErrNotAcquired
			res.errs = append(res.errs, fmt.Errorf("%w: the counter of %q", ErrTokensExhausted, key))
			return res
		}
		t := token
		call := newScriptCall(writeBackScript, names, value, t.String())
		call.lineage = c.cfg.quarantine
		rq := request[[]any]{call: call, parse: func(cmd *redis.Cmd) ([]any, error) { return cmd.Slice() }}
		r := startRound(ctx, c, granted, timeout, func(*master) request[[]any] { return rq })
		votes := make([]bool, len(c.masters))
		for _, i := range granted {
			votes[i] = true
		}
		above := fencing.Token(0)
		d, cause := r.collect(ctx, votes, c.quorum, func(i int, rep reply[[]any]) (outcome, error) {
			status, counter, cert, inc, err := parseWriteBack(rep.val)
			if err != nil {
				return errorReply, c.masters[i].wrap(fmt.Errorf("%w: %w", ErrReplyError, err))
			}
			votes[i] = c.counts(i, cert, inc, rep.seen)
			switch status {
			case 1:
				return yes, nil
			case 0:
				above = max(above, counter)
				return no, c.masters[i].wrap(fmt.Errorf("%w: %d, token %d", ErrCounterAhead, counter, t))
			}
			return no, c.masters[i].wrap(ErrHeldByOther)
		})
		res.errs = append(res.errs, r.errs...)
		if d == held {
			res.token = t
			return res
		}
		if cause == nil {
			res.errs = append(res.errs, r.silence()...)
		}
		if cause != nil || above == 0 {
			res.kind, res.cause = failureKind(r.out), cause
			return res
		}
		token = above + 1 + fencing.Token(rand.IntN(1<<min(try+1, 6)))
	}
	res.kind = ErrNotAcquired
	return res
}

func parseWriteBack(res []any) (status int64, counter fencing.Token, cert, inc string, err error) {
	if len(res) != 4 {
		return 0, 0, "", "", fmt.Errorf("write-back script returned %d values, want 4", len(res))
	}
	status, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	cert, ok3 := res[2].(string)
	inc, ok4 := res[3].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 {
		return 0, 0, "", "", fmt.Errorf("write-back script returned %T, %T, %T, %T", res[0], res[1], res[2], res[3])
	}
	counter, err = parseCounter(ctr)
	return status, counter, cert, inc, err
}
