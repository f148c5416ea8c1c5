package semaphore

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// aclClient creates the user name on master i, allowed everything but what
// rules take away, and returns a client logged in as it.
func aclClient(t *testing.T, c *clustertest.Cluster, i int, name string, rules ...string) redis.UniversalClient {
	t.Helper()
	args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~*", "&*", "+@all"}
	for _, r := range rules {
		args = append(args, r)
	}
	adminDo(t, c, i, args...)
	return c.Servers[i].Client(t, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
}

// adminDo runs a command on master i as the default user.
func adminDo(t *testing.T, c *clustertest.Cluster, i int, args ...any) {
	t.Helper()
	if err := c.Servers[i].Client(t).Do(ctxFor(t, 5*time.Second), args...).Err(); err != nil {
		t.Fatalf("master %d: %v: %v", i, args, err)
	}
}

// acquireBounded runs Acquire with a generous deadline: an Acquire that
// waits instead of giving up ends with the deadline's error; ended says
// whether the deadline had passed when Acquire returned.
func acquireBounded(t *testing.T, s *Semaphore) (p *Permit, err error, ended bool) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	p, err = s.Acquire(ctx)
	return p, err, ctx.Err() != nil
}

// wantMisconfigured checks that Acquire gave up at once (before its
// deadline) with an error matching redlock.ErrMisconfigured that names one
// of replies.
func wantMisconfigured(t *testing.T, what string, s *Semaphore, replies ...string) {
	t.Helper()
	p, err, ended := acquireBounded(t, s)
	if p != nil {
		_ = p.Release(context.Background())
		t.Fatalf("%s: Acquire took a permit; want redlock.ErrMisconfigured", what)
	}
	if ended || errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, redlock.ErrMisconfigured) {
		t.Fatalf("%s: %v (deadline passed: %v); want redlock.ErrMisconfigured at once, not the deadline", what, err, ended)
	}
	named := false
	for _, r := range replies {
		named = named || strings.Contains(err.Error(), r)
	}
	if !named {
		t.Fatalf("%s: %v; want it to name one of %q", what, err, replies)
	}
	t.Logf("%s: %v", what, err)
}

// wantAcquired checks that Acquire takes a permit, and releases it.
func wantAcquired(t *testing.T, what string, s *Semaphore) {
	t.Helper()
	p, err, _ := acquireBounded(t, s)
	if err != nil {
		t.Fatalf("%s: %v; want a permit", what, err)
	}
	if err := p.Release(context.Background()); err != nil {
		t.Fatalf("%s: Release: %v", what, err)
	}
}

// wantWaited checks that Acquire, given a short context, waited until it
// ended: the masters' refusal passes (here OOM), so it is no
// misconfiguration.
func wantWaited(t *testing.T, what string, s *Semaphore) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	p, err := s.Acquire(ctx)
	if p != nil {
		_ = p.Release(context.Background())
	}
	if p != nil || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, redlock.ErrMisconfigured) {
		t.Fatalf("%s: %v; want Acquire to wait until its context ends", what, err)
	}
}

// oom makes master i refuse every write until memory frees (maxmemory 1,
// noeviction): a refusal that waiting may change.
func oom(t *testing.T, c *clustertest.Cluster, i int) {
	t.Helper()
	adminDo(t, c, i, "CONFIG", "SET", "maxmemory-policy", "noeviction")
	adminDo(t, c, i, "CONFIG", "SET", "maxmemory", "1")
}

// Acquire on one master gives up at once when the master refuses the
// semaphore's commands for good, in every variant: an ACL user without ZADD
// (NOPERM while a MULTI is queued for Basic and Fair; the script's ACL
// denial for Atomic and for Guarded's guard lock), a string at the
// semaphore's ZSET (WRONGTYPE). Before, it retried until its context ended.
// OOM passes when memory frees: Acquire waits.
func TestAcquireStopsWhenTheMasterRefusesForGood(t *testing.T) {
	for _, v := range variants {
		t.Run(v.String(), func(t *testing.T) {
			c, admin := realMasters(t, 1)
			user := aclClient(t, c, 0, "nozadd", "-zadd")
			wantMisconfigured(t, "NOPERM", newSem(t, []redis.UniversalClient{user}, "noperm", 2, WithVariant(v)),
				"NOPERM", "can't run this command")

			adminDo(t, c, 0, "SET", keysFor("wt").holders, "not a semaphore")
			wantMisconfigured(t, "WRONGTYPE", newSem(t, admin, "wt", 2, WithVariant(v)), "WRONGTYPE")

			wantAcquired(t, "a sound semaphore", newSem(t, admin, "ok", 2, WithVariant(v)))
			oom(t, c, 0)
			wantWaited(t, "OOM", newSem(t, admin, "oom", 2, WithVariant(v)))
		})
	}
}

// Atomic on three masters gives up at once when two refuse for good: NOPERM
// for the survey's script (the survey), the lock script's ACL denial of ZADD
// (the slot's TryLock), a list at the limit key (WRONGTYPE). One master
// refusing for good still acquires. OOM on two waits.
func TestAcquireStopsWhenAMajorityRefusesForGood(t *testing.T) {
	c, admin := realMasters(t, 3)
	users := func(name string, refusing int, rules ...string) []redis.UniversalClient {
		out := make([]redis.UniversalClient, 3)
		for i := range out {
			if i < refusing {
				out[i] = aclClient(t, c, i, name, rules...)
			} else {
				out[i] = aclClient(t, c, i, name)
			}
		}
		return out
	}
	wantMisconfigured(t, "NOPERM for the survey on two masters",
		newSem(t, users("noeval", 2, "-evalsha", "-eval"), "noeval", 2), "NOPERM")
	wantMisconfigured(t, "ZADD denied to the lock script on two masters",
		newSem(t, users("nozadd", 2, "-zadd"), "nozadd", 2), "NOPERM", "can't run this command")
	for _, i := range []int{0, 1} {
		adminDo(t, c, i, "LPUSH", LimitKey("wt"), "not a limit")
	}
	wantMisconfigured(t, "WRONGTYPE on two masters", newSem(t, admin, "wt", 2), "WRONGTYPE")

	wantAcquired(t, "NOPERM for the survey on one master", newSem(t, users("noeval1", 1, "-evalsha", "-eval"), "noeval1", 2))
	wantAcquired(t, "ZADD denied on one master", newSem(t, users("nozadd1", 1, "-zadd"), "nozadd1", 2))
	adminDo(t, c, 0, "LPUSH", LimitKey("wt1"), "not a limit")
	wantAcquired(t, "WRONGTYPE on one master", newSem(t, admin, "wt1", 2))

	for _, i := range []int{0, 1} {
		oom(t, c, i)
	}
	wantWaited(t, "OOM on two masters", newSem(t, admin, "oom", 2))
}
