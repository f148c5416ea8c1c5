package redlock

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// Hostile and unusual replies, provoked on real masters. Each test checks
// the per-master error names the reply, the overall outcome (no lease
// without a majority), that no key of ours is left behind, and, for a held
// lease, that its loss is reported. Three masters: quorum 2.

// admin runs a command on master i and fails the test on an error.
func (r *rig) admin(t *testing.T, i int, args ...any) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	if err := r.clients[i].Do(ctx, args...).Err(); err != nil {
		t.Fatalf("master %d: %v: %v", i, args, err)
	}
}

// noKeyLeft waits until key is on no master.
func noKeyLeft(t *testing.T, r *rig, key string) {
	t.Helper()
	eventually(t, 5*time.Second, "no key "+key+" left on any master", func() bool { return countNonEmpty(r.values(t, key)) == 0 })
}

// wantRefused checks that err is a failed lock that names reply (the
// masters' error reply) and matches ErrNoQuorum and ErrReplyError.
func wantRefused(t *testing.T, lease *Lease, err error, reply string) {
	t.Helper()
	if lease != nil || !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrReplyError) || !strings.Contains(err.Error(), reply) {
		t.Fatalf("lock: %v; want ErrNoQuorum with %s error replies", err, reply)
	}
	var me *MasterError
	if !errors.As(err, &me) {
		t.Fatalf("lock: %v: no MasterError", err)
	}
	t.Logf("%s: %v", reply, err)
}

// OOM: maxmemory 1 with noeviction refuses every write.
func TestHostileOOM(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	held, err := c.TryLock(ctx, "oom:held", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	for _, i := range []int{0, 1} {
		r.admin(t, i, "CONFIG", "SET", "maxmemory-policy", "noeviction")
		r.admin(t, i, "CONFIG", "SET", "maxmemory", "1")
	}
	lease, err := c.TryLock(ctx, "oom:new", time.Second)
	wantRefused(t, lease, err, "OOM")
	noKeyLeft(t, r, "oom:new") // master 2's grant is taken back

	// The lease taken before: extending needs no memory (PEXPIRE), the
	// release deletes (DEL is allowed under OOM). Nothing is left.
	if err := held.Extend(ctx, 5*time.Second); err != nil {
		t.Errorf("Extend under OOM: %v", err)
	}
	if err := held.Release(ctx); err != nil {
		t.Errorf("Release under OOM: %v", err)
	}
	noKeyLeft(t, r, "oom:held")

	// One master out of memory: a majority still grants.
	r.admin(t, 1, "CONFIG", "SET", "maxmemory", "0")
	lease, err = c.TryLock(ctx, "oom:one", time.Second)
	if err != nil {
		t.Fatalf("one master OOM: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	noKeyLeft(t, r, "oom:one")
}

// READONLY: two masters turned into replicas of the third.
func TestHostileReadOnlyReplicas(t *testing.T) {
	r := newRig(t, 3, withServerArgs("--repl-diskless-sync-delay", "0"))
	c := r.client(t)
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		r.admin(t, i, "REPLICAOF", "127.0.0.1", fmt.Sprint(r.Servers[2].Port))
	}
	eventually(t, 10*time.Second, "replicas in sync", func() bool {
		for _, i := range []int{0, 1} {
			info, _ := r.clients[i].Info(ctx, "replication").Result()
			if !strings.Contains(info, "master_link_status:up") {
				return false
			}
		}
		return true
	})
	for _, i := range []int{0, 1} { // REPLICAOF dropped the clients' connections
		eventually(t, 5*time.Second, "replica answers", func() bool { return r.clients[i].Ping(ctx).Err() == nil })
	}
	lease, err := c.TryLock(ctx, "ro", 5*time.Second)
	wantRefused(t, lease, err, "READONLY")
	noKeyLeft(t, r, "ro") // deleted on master 2, and so on its replicas

	// With quarantine on, the probes see role:slave and the replicas do not
	// vote at all.
	q, err := New(r.clients, WithQuarantine(time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	defer q.Close()
	_, err = q.TryLock(ctx, "ro", time.Second)
	if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrReplica) {
		t.Fatalf("TryLock with quarantine on replicas: %v; want ErrNoQuorum naming ErrReplica", err)
	}
	noKeyLeft(t, r, "ro")
}

// NOSCRIPT: SCRIPT FLUSH empties the masters' script caches; lone calls and
// pipelined ones (the batcher) fall back to EVAL.
func TestHostileNoScriptAfterFlush(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	held, err := c.TryLock(ctx, "ns:held", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	flush := func() {
		for i := range r.clients {
			r.admin(t, i, "SCRIPT", "FLUSH")
		}
	}
	flush()
	if err := held.Extend(ctx, 5*time.Second); err != nil {
		t.Fatalf("Extend after SCRIPT FLUSH: %v", err)
	}
	flush()
	// Many at once, so that calls queue and go out as pipelines.
	const n = 64
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() {
			key := fmt.Sprintf("ns:%d", k)
			l, err := c.TryLock(ctx, key, 5*time.Second)
			if err == nil {
				err = l.Release(ctx)
			}
			errs[k] = err
		})
	}
	wg.Wait()
	for k, err := range errs {
		if err != nil {
			t.Errorf("key %d after SCRIPT FLUSH: %v", k, err)
		}
	}
	flush()
	if err := held.Release(ctx); err != nil {
		t.Fatalf("Release after SCRIPT FLUSH: %v", err)
	}
	for k := range n {
		noKeyLeft(t, r, fmt.Sprintf("ns:%d", k))
	}
	noKeyLeft(t, r, "ns:held")
}

// LOADING: two masters restart and load a dataset slowly (key-load-delay
// makes loading 20000 keys take about two seconds, and a small
// loading-process-events-interval-bytes makes them answer clients while
// loading); meanwhile they answer LOADING.
func TestHostileLoading(t *testing.T) {
	r := newRig(t, 3, withServerArgs("--enable-debug-command", "yes", "--key-load-delay", "100",
		"--loading-process-events-interval-bytes", "1024")) // answer clients while loading
	c := r.client(t)
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		r.admin(t, i, "DEBUG", "POPULATE", "20000", "filler")
		r.admin(t, i, "SAVE")
	}
	var wg sync.WaitGroup
	restartErrs := make([]error, 2)
	for _, i := range []int{0, 1} {
		if err := r.Servers[i].Kill(); err != nil {
			t.Fatal(err)
		}
		wg.Go(func() { restartErrs[i] = r.Servers[i].Restart(clustertest.NoPersistence) })
	}
	defer wg.Wait()
	var seen error
	deadline := time.Now().Add(20 * time.Second)
	for k := 0; seen == nil && time.Now().Before(deadline); k++ {
		lease, err := c.TryLock(ctx, "loading", time.Second)
		if lease != nil {
			// Both loading masters answered: loading was over already.
			_ = lease.Release(ctx)
			break
		}
		if strings.Contains(fmt.Sprint(err), "LOADING") {
			seen = err
			wantRefused(t, lease, err, "LOADING")
		}
		time.Sleep(10 * time.Millisecond)
	}
	wg.Wait()
	for _, err := range restartErrs {
		if err != nil {
			t.Fatal(err)
		}
	}
	if seen == nil {
		t.Fatal("no attempt met a LOADING master")
	}
	noKeyLeft(t, r, "loading")
	lease, err := c.TryLock(ctx, "loading", time.Second)
	if err != nil {
		t.Fatalf("after loading: %v", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// BUSY: a long script on two masters (busy-reply-threshold 50 ms): other
// clients get BUSY until it ends or is killed.
func TestHostileBusyScript(t *testing.T) {
	r := newRig(t, 3, withServerArgs("--busy-reply-threshold", "50"))
	c := r.client(t)
	ctx := context.Background()
	held, err := c.TryLock(ctx, "busy:held", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	const spin = `local s = redis.call('TIME')[1] + 10
while tonumber(redis.call('TIME')[1]) < s do end
return 1`
	var wg sync.WaitGroup
	defer wg.Wait()
	for _, i := range []int{0, 1} {
		long := r.Servers[i].Client(t, func(o *redis.Options) { o.ReadTimeout = 20 * time.Second })
		wg.Go(func() { _ = long.Eval(context.Background(), spin, nil).Err() })
	}
	kill := func() {
		for _, i := range []int{0, 1} {
			_ = r.clients[i].Do(ctx, "SCRIPT", "KILL").Err()
		}
	}
	defer kill()
	eventually(t, 5*time.Second, "masters 0 and 1 busy", func() bool {
		return strings.HasPrefix(fmt.Sprint(r.clients[0].Ping(ctx).Err()), "BUSY") &&
			strings.HasPrefix(fmt.Sprint(r.clients[1].Ping(ctx).Err()), "BUSY")
	})
	lease, err := c.TryLock(ctx, "busy:new", time.Second)
	wantRefused(t, lease, err, "BUSY")
	err = held.Extend(ctx, 10*time.Second)
	if !errors.Is(err, ErrReplyError) || !strings.Contains(err.Error(), "BUSY") {
		t.Errorf("Extend while two masters are busy: %v; want BUSY error replies", err)
	}
	kill()
	wg.Wait()
	noKeyLeft(t, r, "busy:new")
	if err := held.Release(ctx); err != nil && !errors.Is(err, ErrLockLost) {
		t.Errorf("Release after the busy script: %v", err)
	}
	noKeyLeft(t, r, "busy:held")
}

// NOPERM: the client's user may not run EVALSHA on some masters.
func TestHostileNoPerm(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	users := make([]redis.UniversalClient, 3)
	for i, s := range r.Servers {
		rule := "+evalsha"
		if i < 2 {
			rule = "-evalsha"
		}
		r.admin(t, i, "ACL", "SETUSER", "locker", "reset", "on", ">pw", "~*", "&*", "+@all", rule)
		users[i] = s.Client(t, func(o *redis.Options) { o.Username, o.Password = "locker", "pw" })
	}
	c, err := New(users, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lease, err := c.TryLock(ctx, "noperm", time.Second)
	wantRefused(t, lease, err, "NOPERM")
	if !strings.Contains(err.Error(), "'evalsha'") {
		t.Errorf("the error does not name the command: %v", err)
	}
	noKeyLeft(t, r, "noperm")
}

// WRONGTYPE on the lock key: a list where the lock would go. The list is
// left alone and nothing of ours stays.
func TestHostileWrongTypeLockKey(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		r.admin(t, i, "LPUSH", "wt", "not a lock")
	}
	lease, err := c.TryLock(ctx, "wt", time.Second)
	wantRefused(t, lease, err, "WRONGTYPE")
	for _, i := range []int{0, 1} {
		if n, err := r.clients[i].LLen(ctx, "wt").Result(); err != nil || n != 1 {
			t.Errorf("master %d: the list: %d %v", i, n, err)
		}
	}
	eventually(t, 5*time.Second, "master 2's grant taken back", func() bool {
		n, _ := r.clients[2].Exists(ctx, "wt").Result()
		return n == 0
	})
}

// WRONGTYPE on the fencing counter: the acquire script set the lock key
// before it failed reading the counter (scripts do not roll back): the
// cleanup must delete those keys.
func TestHostileWrongTypeCounter(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	for _, i := range []int{0, 1} {
		r.admin(t, i, "LPUSH", keys.Bucket(keys.BucketOf("wtc", DefaultFenceBuckets)), "not a counter")
	}
	lease, err := c.TryLock(ctx, "wtc", 10*time.Second) // the TTL outlives the test: only a delete removes the keys
	wantRefused(t, lease, err, "WRONGTYPE")
	noKeyLeft(t, r, "wtc")

	// One bad counter: the lock is held on a majority, with a token. (Another
	// key: a SET of the first attempt not waited for may still land on
	// master 2, and its cleanup would race this one.)
	r.admin(t, 0, "LPUSH", keys.Bucket(keys.BucketOf("wtc1", DefaultFenceBuckets)), "not a counter")
	lease, err = c.TryLock(ctx, "wtc1", 10*time.Second)
	if err != nil {
		t.Fatalf("one bad counter: %v", err)
	}
	if lease.Token() == 0 {
		t.Error("zero token")
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	noKeyLeft(t, r, "wtc1")
}

// A key deleted, or overwritten, by hand on a majority: the lease is lost
// and says so, on Extend and with auto-extend.
func TestHostileKeyDeletedByHand(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()

	lease, err := c.TryLock(ctx, "byhand", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	// TryLock returns once a majority granted: wait for the third SET, or
	// it could land after the DELs below.
	eventually(t, 5*time.Second, "key on every master", func() bool { return countNonEmpty(r.values(t, "byhand")) == 3 })
	r.admin(t, 0, "DEL", "byhand")
	r.admin(t, 1, "DEL", "byhand")
	if err := lease.Extend(ctx, 5*time.Second); !errors.Is(err, ErrLockLost) || !errors.Is(err, ErrKeyAbsent) {
		t.Fatalf("Extend after DEL by hand: %v; want ErrLockLost naming ErrKeyAbsent", err)
	}
	select {
	case <-lease.Done():
	default:
		t.Error("Done still open after a failed Extend")
	}
	noKeyLeft(t, r, "byhand") // Extend never recreates a key; master 2's expires or is released
	_ = lease.Release(ctx)

	auto, err := c.TryLock(ctx, "byhand:auto", time.Second, WithAutoExtendInterval(100*time.Millisecond))
	if err != nil {
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "key on every master", func() bool { return countNonEmpty(r.values(t, "byhand:auto")) == 3 })
	r.admin(t, 0, "SET", "byhand:auto", "someone else")
	r.admin(t, 1, "SET", "byhand:auto", "someone else")
	select {
	case <-auto.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("auto-extended lease not lost after its keys were overwritten")
	}
	if cause := context.Cause(auto.Context()); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("cause %v; want ErrLockLost", cause)
	}
	if err := auto.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Errorf("Release of the lost lease: %v; want ErrLockLost", err)
	}
	if got := r.values(t, "byhand:auto"); got[0] != "someone else" || got[1] != "someone else" {
		t.Errorf("the other owner's keys were touched: %q", got)
	}
}

// WRONGPASS at login: go-redis returns it from a pipeline's Exec without
// stamping it on the commands; calls that went out through the batcher
// must still say WRONGPASS, not "unexpected type".
func TestHostileWrongPasswordEveryPath(t *testing.T) {
	r := newRig(t, 3)
	ctx := context.Background()
	users := make([]redis.UniversalClient, 3)
	for i, s := range r.Servers {
		r.admin(t, i, "ACL", "SETUSER", "locker", "reset", "on", ">right", "~*", "&*", "+@all")
		users[i] = s.Client(t, func(o *redis.Options) { o.Username, o.Password, o.MaxRetries = "locker", "wrong", -1 })
	}
	c, err := New(users, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	const n = 32 // concurrent: most calls queue and go out as pipelines
	errs := make([]error, n)
	var wg sync.WaitGroup
	for k := range n {
		wg.Go(func() { _, errs[k] = c.TryLock(ctx, fmt.Sprintf("wp:%d", k), 10*time.Second) }) // a 1 s per-master timeout: failed logins take a dial each
	}
	wg.Wait()
	for k, err := range errs {
		if !errors.Is(err, ErrNoQuorum) || !errors.Is(err, ErrReplyError) || !strings.Contains(err.Error(), "WRONGPASS") {
			t.Errorf("attempt %d with a wrong password: %v; want ErrNoQuorum with WRONGPASS error replies", k, err)
		}
	}
	for k := range n {
		noKeyLeft(t, r, fmt.Sprintf("wp:%d", k))
	}
}
