package inspect

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"sort"
	"strconv"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// OwnerID names the owner of a lock value without revealing it: the first 12
// hex digits of SHA-256 over the value. The value is the lease's secret
// (whoever knows it can release the lock); the id is safe to print and the
// same on every master and in `lock`'s output.
func OwnerID(value string) string {
	sum := sha256.Sum256([]byte(value))
	return hex.EncodeToString(sum[:6])
}

// Verdicts of a key.
const (
	VerdictHeld    = "held"    // a majority of masters agree on one owner
	VerdictFree    = "free"    // no master holds the key, and a majority answered
	VerdictSplit   = "split"   // holders exist, but no owner has a majority
	VerdictUnknown = "unknown" // fewer than a majority answered: nothing can be said
)

// KeyMaster is one master's view of a key.
type KeyMaster struct {
	Master    int     `json:"master"`
	URL       string  `json:"url"`
	Reachable bool    `json:"reachable"`
	Cause     string  `json:"cause,omitempty"` // why unreachable
	Owner     string  `json:"owner,omitempty"` // OwnerID of the value, "" when the key is absent
	PTTLms    int64   `json:"pttl_ms"`         // remaining TTL in ms; -1 no TTL (never expires); -2 absent
	Fence     uint64  `json:"fence"`           // the key's fencing counter on this master (0: none)
	Latency   float64 `json:"latency_ms"`
}

// KeyReport is a key across every master, with its verdict.
type KeyReport struct {
	Key      string      `json:"key"`
	Verdict  string      `json:"verdict"`
	Owner    string      `json:"owner,omitempty"` // the majority's owner when held
	Holders  int         `json:"holders"`         // masters holding Owner (held), else the largest group
	Quorum   int         `json:"quorum"`
	Answered int         `json:"answered"`
	Fence    uint64      `json:"fence"` // highest fencing counter seen
	Masters  []KeyMaster `json:"masters"`
	Strays   []Stray     `json:"strays,omitempty"` // keys held by an owner without a majority
}

// Stray is a minority key: it blocks nobody's majority but may block
// acquisitions until it expires (or forever without a TTL).
type Stray struct {
	Master int    `json:"master"`
	Owner  string `json:"owner"`
	PTTLms int64  `json:"pttl_ms"`
}

// Key reads key, its PTTL and its fencing counter on every master in
// parallel, each bounded by ctx; q is how many masters a lock needs (0: a
// majority).
func Key(ctx context.Context, clients []redis.UniversalClient, urls []string, key string, q int) KeyReport {
	out := make([]KeyMaster, len(clients))
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Go(func() {
			km := KeyMaster{Master: i, URL: urls[i], PTTLms: -2}
			start := time.Now()
			pipe := rc.Pipeline()
			get := pipe.Get(ctx, key)
			pttl := pipe.PTTL(ctx, key)
			counters := pipe.MGet(ctx, keys.Legacy(key), keys.Floor, keys.FenceBuckets)
			_, err := pipe.Exec(ctx)
			km.Latency = float64(time.Since(start).Microseconds()) / 1000
			if err != nil && !errors.Is(err, redis.Nil) {
				km.Cause = Describe(err)
				out[i] = km
				return
			}
			km.Reachable = true
			if v, err := get.Result(); err == nil {
				km.Owner = OwnerID(v)
			} else if !errors.Is(err, redis.Nil) {
				km.Cause = Describe(err) // e.g. WRONGTYPE: not a lock
			}
			if d, err := pttl.Result(); err == nil {
				km.PTTLms = pttlMillis(d)
			}
			if vals, err := counters.Result(); err == nil {
				km.Fence = fenceCounter(ctx, rc, key, vals)
			}
			out[i] = km
		})
	}
	wg.Wait()
	return judge(key, out, q)
}

// pttlMillis turns go-redis's PTTL result back into Redis's convention.
func pttlMillis(d time.Duration) int64 {
	if d < 0 { // go-redis returns -1 and -2 as raw nanosecond durations
		return int64(d)
	}
	return d.Milliseconds()
}

// judge gives a key its verdict from the masters' views.
func judge(key string, ms []KeyMaster, q int) KeyReport {
	if q <= 0 {
		q = len(ms)/2 + 1
	}
	r := KeyReport{Key: key, Quorum: q, Masters: ms}
	count := map[string]int{}
	for _, m := range ms {
		if m.Reachable {
			r.Answered++
		}
		if m.Owner != "" {
			count[m.Owner]++
		}
		r.Fence = max(r.Fence, m.Fence)
	}
	owners := make([]string, 0, len(count))
	for o := range count {
		owners = append(owners, o)
	}
	sort.Slice(owners, func(i, j int) bool {
		if count[owners[i]] != count[owners[j]] {
			return count[owners[i]] > count[owners[j]]
		}
		return owners[i] < owners[j]
	})
	if len(owners) > 0 {
		r.Holders = count[owners[0]]
	}
	switch {
	case r.Holders >= r.Quorum:
		r.Verdict, r.Owner = VerdictHeld, owners[0]
	case r.Answered < r.Quorum:
		r.Verdict = VerdictUnknown
	case len(owners) == 0:
		r.Verdict = VerdictFree
	default:
		r.Verdict = VerdictSplit
	}
	for _, m := range ms {
		if m.Owner != "" && m.Owner != r.Owner {
			r.Strays = append(r.Strays, Stray{Master: m.Master, Owner: m.Owner, PTTLms: m.PTTLms})
		}
	}
	return r
}

// fenceCounter is the counter key's next token is drawn from on one master:
// the largest of its fence bucket's counter (the masters record how many
// buckets their clients use), its per-key counter of an earlier version
// and the token floor. vals are the per-key counter, the floor and the
// bucket count, as MGET read them.
func fenceCounter(ctx context.Context, rc redis.UniversalClient, key string, vals []any) uint64 {
	var n uint64
	for _, v := range vals[:2] {
		if s, ok := v.(string); ok {
			x, _ := strconv.ParseUint(s, 10, 64)
			n = max(n, x)
		}
	}
	b := redlock.DefaultFenceBuckets
	if s, ok := vals[2].(string); ok {
		if x, err := strconv.Atoi(s); err == nil && x > 0 {
			b = x
		}
	}
	if s, err := rc.Get(ctx, keys.Bucket(keys.BucketOf(key, b))).Result(); err == nil {
		x, _ := strconv.ParseUint(s, 10, 64)
		n = max(n, x)
	}
	return n
}
