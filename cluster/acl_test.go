package cluster

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// docACLLine is the ACL SETUSER line of docs/security.md, word for word.
func docACLLine(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, "ACL SETUSER quorumlock ") {
			return line
		}
	}
	t.Fatal("docs/security.md has no line starting with ACL SETUSER quorumlock")
	return ""
}

// applyACL runs an ACL SETUSER line (with CHANGE-ME replaced by password)
// on s as the default user, with the words in drop left out.
func applyACL(t *testing.T, s *clustertest.Server, line, password string, drop ...string) {
	t.Helper()
	var args []any
	for _, w := range strings.Fields(strings.ReplaceAll(line, "CHANGE-ME", password)) {
		keep := true
		for _, d := range drop {
			keep = keep && w != d
		}
		if keep {
			args = append(args, w)
		}
	}
	if err := s.Client(t).Do(context.Background(), args...).Err(); err != nil {
		t.Fatalf("%v: %v", args, err)
	}
}

// aclCluster starts n masters with the documented user and dials them as it.
func aclCluster(t *testing.T, n int, password string, drop ...string) (*clustertest.Cluster, *Cluster) {
	t.Helper()
	rc := clustertest.Start(t, n)
	line := docACLLine(t)
	var urls []string
	for _, s := range rc.Servers {
		applyACL(t, s, line, password, drop...)
		urls = append(urls, "redis://quorumlock@"+s.Addr)
	}
	c, err := Dial(context.Background(), urls, WithCredentials("", password))
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	return rc, c
}

// The library's whole life under the least-privilege user: bootstrap of a
// fresh cluster, TryLock, a contended Lock woken by the release
// notification, Extend, Release, Check, and after a master lost its data,
// the quarantine and the raising of its fencing counters.
func TestACLUserRunsTheLibrary(t *testing.T) {
	ctx := context.Background()
	const pw = "acl-test-password"
	rc, c := aclCluster(t, 3, pw)
	for _, st := range c.Check(ctx) {
		if !st.Reachable {
			t.Fatalf("Check as the ACL user: master %d: %v", st.Master, st.Err)
		}
	}
	locks, err := redlock.New(c.Clients(), redlock.WithQuarantine(300*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	const ttl = 300 * time.Millisecond
	lease, err := locks.TryLock(ctx, "locks:a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Extend(ctx, ttl); err != nil {
		t.Fatalf("Extend: %v", err)
	}
	var wg sync.WaitGroup
	var waiter *redlock.Lease
	var waitErr error
	wctx, cancel := context.WithTimeout(ctx, 10*time.Second)
	defer cancel()
	wg.Go(func() { waiter, waitErr = locks.Lock(wctx, "locks:a", time.Second) })
	time.Sleep(50 * time.Millisecond) // let the waiter try once and subscribe
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release: %v", err)
	}
	wg.Wait()
	if waitErr != nil {
		t.Fatalf("contended Lock: %v", waitErr)
	}
	if waiter.Token() <= lease.Token() {
		t.Errorf("tokens %d then %d: not increasing", lease.Token(), waiter.Token())
	}
	last := waiter.Token()
	if err := waiter.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// Master 0 loses everything (ACL user included: recreate it). The
	// library waits out its quarantine and raises its counters from the
	// others, all as the ACL user.
	s0 := rc.Servers[0]
	if err := s0.Restart(clustertest.NoPersistence); err != nil {
		t.Fatal(err)
	}
	applyACL(t, s0, docACLLine(t), pw)
	admin := s0.Client(t)
	deadline := time.Now().Add(15 * time.Second)
	for {
		if l, err := locks.TryLock(ctx, "locks:b", ttl); err == nil {
			_ = l.Release(ctx)
		}
		h := locks.Health()[0]
		got, _ := admin.Get(ctx, keys.Bucket(keys.BucketOf("locks:a", redlock.DefaultFenceBuckets))).Int64()
		if !h.Quarantined && h.Probed && got >= int64(last) {
			break
		}
		if time.Now().After(deadline) {
			t.Fatalf("master 0 after data loss: health %+v, counter of locks:a %d, want >= %d", h, got, last)
		}
		time.Sleep(50 * time.Millisecond)
	}
	l, err := locks.TryLock(ctx, "locks:a", ttl)
	if err != nil {
		t.Fatal(err)
	}
	if l.Token() <= last {
		t.Errorf("token after the sync %d, want > %d", l.Token(), last)
	}
	_ = l.Release(ctx)
	// Nothing the library sent was refused but the optional CONFIG GET
	// (and the logins on master 0 before its user was recreated).
	for i, s := range rc.Servers {
		entries, err := s.Client(t).Do(ctx, "ACL", "LOG").Slice()
		if err != nil {
			t.Fatal(err)
		}
		for _, e := range entries {
			if d := fmt.Sprint(e); !strings.Contains(d, "object:config|get") && !strings.Contains(d, "reason:auth") {
				t.Errorf("master %d: ACL LOG has a denial: %s", i, d)
			}
		}
	}
}

func TestACLUserCannotTouchOtherKeys(t *testing.T) {
	ctx := context.Background()
	rc, c := aclCluster(t, 3, "pw")
	admin := rc.Servers[0].Client(t)
	if err := admin.Set(ctx, "payroll", "secret", 0).Err(); err != nil {
		t.Fatal(err)
	}
	user := c.Clients()[0]
	for name, err := range map[string]error{
		"GET":       user.Get(ctx, "payroll").Err(),
		"SET":       user.Set(ctx, "payroll", "x", 0).Err(),
		"DEL":       user.Del(ctx, "payroll").Err(),
		"FLUSHALL":  user.FlushAll(ctx).Err(),
		"LPUSH":     user.LPush(ctx, "locks:x", "1").Err(),
		"CONFIG":    user.ConfigSet(ctx, "maxmemory", "1").Err(),
		"script":    user.Eval(ctx, "return redis.call('GET', 'payroll')", nil).Err(),
		"ACL":       user.Do(ctx, "ACL", "WHOAMI").Err(),
		"SUBSCRIBE": subscribeErr(ctx, user, "other"),
	} {
		if err == nil || !strings.Contains(err.Error(), "NOPERM") && !strings.Contains(err.Error(), "can't access") {
			t.Errorf("%s as the ACL user: %v; want a permission error", name, err)
		}
	}
	if v, _ := admin.Get(ctx, "payroll").Result(); v != "secret" {
		t.Errorf("payroll = %q after the user's attempts", v)
	}

	locks, err := redlock.New(c.Clients(), redlock.WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	_, err = locks.TryLock(ctx, "payroll", time.Second)
	var me *redlock.MasterError
	if !errors.Is(err, redlock.ErrNoQuorum) || !errors.Is(err, redlock.ErrReplyError) || !errors.As(err, &me) ||
		!strings.Contains(err.Error(), "NOPERM") {
		t.Fatalf("TryLock outside the prefix: %v; want ErrNoQuorum with NOPERM error replies", err)
	}
	t.Logf("lock outside the prefix: %v", err)
	for i, s := range rc.Servers {
		n, err := s.Client(t).Exists(ctx, keys.Bucket(keys.BucketOf("payroll", redlock.DefaultFenceBuckets))).Result()
		if err != nil || n != 0 {
			t.Errorf("master %d: fencing counter of the refused key: exists=%d %v", i, n, err)
		}
	}
	if v, _ := admin.Get(ctx, "payroll").Result(); v != "secret" {
		t.Errorf("payroll = %q after a refused lock", v)
	}
}

func subscribeErr(ctx context.Context, rdb redis.UniversalClient, channel string) error {
	ps := rdb.Subscribe(ctx, channel)
	defer ps.Close()
	_, err := ps.Receive(ctx)
	return err
}

// A permission left out of the line gives an error that names the command.
func TestACLMissingPermissionNamesCommand(t *testing.T) {
	ctx := context.Background()
	_, c := aclCluster(t, 3, "pw", "+evalsha")
	locks, err := redlock.New(c.Clients(), redlock.WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	_, err = locks.TryLock(ctx, "locks:a", time.Second)
	if !errors.Is(err, redlock.ErrReplyError) || !strings.Contains(err.Error(), "NOPERM") || !strings.Contains(err.Error(), "'evalsha'") {
		t.Fatalf("TryLock without +evalsha: %v; want NOPERM naming evalsha", err)
	}
	t.Logf("without +evalsha: %v", err)

	_, c = aclCluster(t, 1, "pw", "+info")
	st := c.Check(ctx)[0]
	if st.Err == nil || !strings.Contains(st.Err.Error(), "NOPERM") || !strings.Contains(st.Err.Error(), "'info'") {
		t.Fatalf("Check without +info: %+v; want NOPERM naming info", st)
	}
	t.Logf("without +info: %v", st.Err)
}

// The line of an earlier version, without +zscore (the acquire script reads
// the lambda set's entry before it writes it since issue 19): locking and
// extending still work, the script writing the entry on every grant as that
// version did, so an upgrade needs no ACL change.
func TestACLLineWithoutZscoreStillLocks(t *testing.T) {
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	rc, c := aclCluster(t, 3, "pw", "+zscore")
	locks, err := redlock.New(c.Clients())
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	for range 3 {
		l, err := locks.TryLock(ctx, "locks:a", time.Second)
		if err != nil {
			t.Fatalf("TryLock as a user without +zscore: %v", err)
		}
		if err := l.Extend(ctx, time.Second); err != nil {
			t.Fatalf("Extend: %v", err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for i, s := range rc.Servers { // as the default user: the lock's user may not ZCARD
		if n, err := s.Client(t).ZCard(ctx, keys.Lambda).Result(); err != nil || n == 0 {
			t.Errorf("master %d: the lambda set has %d entries after three grants (%v)", i, n, err)
		}
	}
}
