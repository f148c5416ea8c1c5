package cli

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/redlock"
)

// Owner-checked extend and release of a handle from an earlier invocation:
// the same checks as redlock/scripts/extend.lua and release.lua, run here
// because a handle is either a lock's or a semaphore slot's (sem refresh and
// sem release take the same path), and because extend and unlock report
// every master's answer (-o json), which redlock.Lease does not return.
var (
	extendScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
end
return 0`)
	releaseScript = redis.NewScript(`if redis.call('GET', KEYS[1]) == ARGV[1] then
  redis.call('DEL', KEYS[1])
  if ARGV[2] ~= '' then redis.call('PUBLISH', ARGV[2] .. KEYS[1], '1') end
  return 1
end
return 0`)
)

// driftFactor and driftFloor are redlock's defaults: validity = ttl −
// elapsed − (ttl·0.01 + 2 ms).
const (
	driftFactor = redlock.DefaultDriftFactor
	driftFloor  = 2 * time.Millisecond
)

func drift(ttl time.Duration) time.Duration {
	return time.Duration(float64(ttl)*driftFactor) + driftFloor
}

// masterResult is one master's answer to an owner-checked script.
type masterResult struct {
	Master int    `json:"master"`
	Result string `json:"result"` // "ok", "not-owner", or why it did not answer
}

// quorumOutcome counts an owner-checked round over every master.
type quorumOutcome struct {
	ok, notOwner, quorum, masters int
	results                       []masterResult
}

// err maps the outcome to redlock's error kinds: nil with a quorum,
// ErrLockLost when too many masters hold someone else's key (or none), else
// ErrNoQuorum.
func (o quorumOutcome) err(op, key string) error {
	if o.ok >= o.quorum {
		return nil
	}
	kind := redlock.ErrNoQuorum
	if o.notOwner > o.masters-o.quorum {
		kind = redlock.ErrLockLost
	}
	return fmt.Errorf("%s %q: %w (%d of %d masters agreed, %d needed)", op, key, kind, o.ok, o.masters, o.quorum)
}

// ownerRound runs script on every master of c in parallel, each bounded by
// perMaster, and counts the masters that answered 1 against c's quorum.
func ownerRound(ctx context.Context, c *cluster.Cluster, perMaster time.Duration, script *redis.Script, key string, args ...any) quorumOutcome {
	clients := c.Clients()
	o := quorumOutcome{quorum: c.Quorum(), masters: len(clients), results: make([]masterResult, len(clients))}
	var mu sync.Mutex
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Go(func() {
			mctx, cancel := context.WithTimeout(ctx, perMaster)
			defer cancel()
			n, err := script.Run(mctx, rc, []string{key}, args...).Int64()
			res := masterResult{Master: i, Result: "ok"}
			mu.Lock()
			defer mu.Unlock()
			switch {
			case err != nil:
				res.Result = inspect.Describe(err)
			case n == 1:
				o.ok++
			default:
				o.notOwner++
				res.Result = "not-owner"
			}
			o.results[i] = res
		})
	}
	wg.Wait()
	return o
}

// extendHandle renews the lease of h for ttl where the masters still hold
// its value; on success it returns the handle with its new validity.
//
// On failure it moves the handle's validity the way redlock's Extend does:
// the masters that ran the PEXPIRE keep the key for ttl only, which may be
// shorter than what the handle claimed, so the returned handle is valid
// until the earlier of its old validity and start + ttl − drift. The error
// matches ErrLockLost when the lease has ended (more than M − quorum masters
// no longer hold its value, or no validity is left): the returned handle is
// then dead and must not be used. Otherwise it matches ErrNoQuorum and the
// returned handle, still valid, is the one to use from now on.
func extendHandle(ctx context.Context, c *cluster.Cluster, perMaster time.Duration, h Handle, ttl time.Duration) (Handle, quorumOutcome, error) {
	start := time.Now()
	if !start.Before(h.ValidUntil) {
		return h, quorumOutcome{}, fmt.Errorf("extend %q: %w: its validity ended at %s", h.Key, redlock.ErrLockLost, h.ValidUntil.Format(time.RFC3339Nano))
	}
	o := ownerRound(ctx, c, perMaster, extendScript, h.Key, h.Value, ttl.Milliseconds())
	newDeadline := start.Add(ttl - drift(ttl))
	err := o.err("extend", h.Key)
	if err == nil {
		if !time.Now().Before(h.ValidUntil) {
			// The old validity ran out while the round was under way: the lease
			// ended, whatever the masters said (as redlock's Extend decides).
			// Take the renewed keys back.
			_, _ = releaseHandle(context.WithoutCancel(ctx), c, perMaster, h)
			return h, o, fmt.Errorf("extend %q: %w: its validity ended at %s while extending", h.Key, redlock.ErrLockLost, h.ValidUntil.Format(time.RFC3339Nano))
		}
		if time.Now().Before(newDeadline) {
			h.ValidUntil, h.TTLms = newDeadline, ttl.Milliseconds()
			return h, o, nil
		}
		err = fmt.Errorf("extend %q: %w: no validity left after %v of a %v TTL", h.Key, redlock.ErrNoQuorum, time.Since(start), ttl)
	}
	// Failed: the masters that ran the PEXPIRE keep the key for ttl only.
	if newDeadline.Before(h.ValidUntil) {
		h.ValidUntil, h.TTLms = newDeadline, ttl.Milliseconds()
	}
	if !errors.Is(err, redlock.ErrLockLost) && !time.Now().Before(h.ValidUntil) {
		return h, o, fmt.Errorf("extend %q: %w: the lease is dead: the failed extend to %v moved its validity to %s, which has passed (%d of %d masters agreed, %d needed)",
			h.Key, redlock.ErrLockLost, ttl, h.ValidUntil.Format(time.RFC3339Nano), o.ok, o.masters, o.quorum)
	}
	return h, o, err
}

// releaseHandle deletes the lease's key wherever it still holds h's value,
// and wakes waiters. A lease whose validity had ended is reported lost even
// when its keys were still there to remove.
func releaseHandle(ctx context.Context, c *cluster.Cluster, perMaster time.Duration, h Handle) (quorumOutcome, error) {
	expired := !time.Now().Before(h.ValidUntil)
	o := ownerRound(ctx, c, perMaster, releaseScript, h.Key, h.Value, keys.ChannelPrefix)
	if err := o.err("unlock", h.Key); err != nil {
		return o, err
	}
	if expired {
		return o, fmt.Errorf("unlock %q: %w: its validity ended at %s (its keys were still on %d masters and are removed)",
			h.Key, redlock.ErrLockLost, h.ValidUntil.Format(time.RFC3339Nano), o.ok)
	}
	return o, nil
}

var errNoQuorumValue = errors.New("no value is held by a quorum of masters")

// leaseValue reads back the value of a semaphore slot the library just
// took: the value a quorum of c's masters hold for key is the slot holder's
// (no two owners can hold a quorum at once). Locks use Lease.State
// instead; a semaphore Permit does not give out its identifier.
func leaseValue(ctx context.Context, c *cluster.Cluster, key string) (string, error) {
	clients := c.Clients()
	vals := make([]string, len(clients))
	var wg sync.WaitGroup
	for i, rc := range clients {
		wg.Go(func() { vals[i], _ = rc.Get(ctx, key).Result() })
	}
	wg.Wait()
	count := map[string]int{}
	for _, v := range vals {
		if v != "" {
			count[v]++
		}
	}
	for v, n := range count {
		if n >= c.Quorum() {
			return v, nil
		}
	}
	return "", errNoQuorumValue
}
