package redlock

import (
	"fmt"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// grant is one master's answer to round 1.
type grant struct {
	granted bool
	counter fencing.Token // before any raise
	cert    string        // the master's certificate, read in the same step
	inc     string        // the master's incarnation, read in the same step
	raised  bool          // the counter was raised to the proposal
	// waiting is, when refused, how many clients are subscribed to the key's
	// release channel on that master: the clients waiting for the key; -1
	// when the master would not say (an ACL user without +pubsub|numsub).
	waiting int64
}

// waitingUnknown stands for a refusing master that would not say how many
// clients wait: Lock then assumes a herd.
const waitingUnknown = 1 << 30

// sendAcquire builds round 1's request: one script call, sent the same to
// every master, with an INFO after it (rule V). A master's batcher may send
// it in one call with other acquires (merge.go).
func (c *Client) sendAcquire(key string, bucket int, value string, ttl time.Duration, proposal fencing.Token, releasedValue string) func(*master) request[grant] {
	buckets := ""
	if c.cfg.fencing {
		buckets = strconv.Itoa(c.cfg.buckets)
	}
	call := acquireCall(key, bucket, value, ttl, proposal, releasedValue, buckets)
	call.lineage = c.cfg.quarantine || !c.identified.Load() // without quarantine, until every master was identified
	rq := request[grant]{call: call, parse: func(cmd *redis.Cmd) (grant, error) {
		res, err := cmd.Slice()
		if err != nil {
			return grant{}, err
		}
		return parseGrant(res)
	}}
	return func(*master) request[grant] { return rq }
}

// acquireCall is one lock's call of acquire.lua (its layout is the script's
// header), which a batcher may merge with its neighbours into one call of
// acquire_many.lua (merge.go). buckets is the fence-bucket count, or ”
// with fencing off.
func acquireCall(key string, bucket int, value string, ttl time.Duration, proposal fencing.Token, releasedValue, buckets string) *scriptCall {
	call := newScriptCall(acquireScript,
		[]string{key, keys.Bucket(bucket), keys.Legacy(key), keys.Floor, keys.Cert, keys.Lambda, keys.FenceBuckets, keys.Incarnation},
		value, ttl.Milliseconds(), proposal.String(), releasedValue, keys.ChannelPrefix+key, buckets)
	call.merge = acquireMerge
	return call
}

func parseGrant(res []any) (grant, error) {
	if len(res) != 6 {
		return grant{}, fmt.Errorf("acquire script returned %d values, want 6", len(res))
	}
	n, ok1 := res[0].(int64)
	ctr, ok2 := res[1].(string)
	cert, ok3 := res[2].(string)
	raised, ok4 := res[3].(int64)
	waiting, ok5 := res[4].(int64)
	inc, ok6 := res[5].(string)
	if !ok1 || !ok2 || !ok3 || !ok4 || !ok5 || !ok6 {
		return grant{}, fmt.Errorf("acquire script returned %T, %T, %T, %T, %T, %T", res[0], res[1], res[2], res[3], res[4], res[5])
	}
	t, err := parseCounter(ctr)
	if err != nil {
		return grant{}, err
	}
	return grant{granted: n == 1, counter: t, cert: cert, inc: inc, raised: raised == 1, waiting: waiting}, nil
}

func parseCounter(s string) (fencing.Token, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil || fencing.Token(v) > fencing.MaxToken {
		return 0, fmt.Errorf("fencing counter %q is not an integer below 2^53", s)
	}
	return fencing.Token(v), nil
}
