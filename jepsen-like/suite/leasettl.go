package suite

import (
	"context"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
)

// leaseTTLs are the TTLs the nemesis asked slots' acquisitions to use
// instead of the workload's (restart-long).
type leaseTTLs struct {
	mu  sync.Mutex
	ttl map[int]time.Duration
}

var (
	_ nemesis.LeaseTTLs  = (*env)(nil)
	_ workload.LeaseTTLs = (*env)(nil)
)

// SetLeaseTTL makes slot s's next acquisitions ask ttl (0: the workload's).
func (e *env) SetLeaseTTL(s int, ttl time.Duration) {
	e.ttls.mu.Lock()
	defer e.ttls.mu.Unlock()
	if e.ttls.ttl == nil {
		e.ttls.ttl = make(map[int]time.Duration)
	}
	e.ttls.ttl[s] = ttl
}

// LeaseTTL is the TTL slot s's next acquisition asks (0: the workload's).
func (e *env) LeaseTTL(s int) time.Duration {
	e.ttls.mu.Lock()
	defer e.ttls.mu.Unlock()
	return e.ttls.ttl[s]
}

// LambdaEntry reads master i's lambda entry for ttl (ZSCORE on a
// connection of its own, not through any slot's proxy).
func (e *env) LambdaEntry(ctx context.Context, i int, ttl time.Duration) (time.Time, bool) {
	c := redis.NewClient(&redis.Options{Addr: e.b.Masters()[i].Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	ms, err := c.ZScore(ctx, keys.Lambda, strconv.FormatInt(ttl.Milliseconds(), 10)).Result()
	if err != nil {
		return time.Time{}, false
	}
	return time.UnixMilli(int64(ms)), true
}
