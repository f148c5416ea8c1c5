package redlock

import (
	"context"
	"errors"
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// The restart rules of docs/safety.md (rule index), each tried against real
// masters by the interleaving that broke an earlier rule (issue 16's review).
// The control in each: plain Redlock (WithoutQuarantine) gives the key a
// second holder in the same interleaving, which shows the test can fail.

// refusedWith is a client of refusedWhileAHolds and the reasons its
// refusal may give (it must match one).
type refusedWith struct {
	c   *Client
	why []error
}

// refusedWhileAHolds checks, while A holds "k" on masters 0, 1 and 2 and
// master 0 lost A's key, that every client of clients is refused k with an
// error matching its reason, and that plain Redlock takes k a second time.
func refusedWhileAHolds(t *testing.T, masters []redis.UniversalClient, clients map[string]refusedWith) {
	t.Helper()
	ctx := context.Background()
	for name, r := range clients {
		_, err := r.c.TryLock(ctx, "k", 30*time.Second)
		if !errors.Is(err, ErrNotAcquired) || !slices.ContainsFunc(r.why, func(why error) bool { return errors.Is(err, why) }) {
			t.Fatalf("%s client's TryLock while A holds k: %v; want ErrNotAcquired with one of %v", name, err, r.why)
		}
	}
	gone(t, []redis.UniversalClient{masters[0], masters[3], masters[4]}, "k") // the failed attempts cleaned up
	plain, err := New(masters, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer plain.Close()
	second, err := plain.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("control: plain Redlock should take k on {0,3,4} (two holders): %v", err)
	}
	_ = second.Release(ctx)
}

func runID(t *testing.T, rdb redis.UniversalClient) string {
	t.Helper()
	info, err := rdb.Info(context.Background(), "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	_, v, _ := strings.Cut(info, "run_id:")
	return strings.TrimSpace(strings.SplitN(v, "\n", 2)[0])
}

// Case 1 of issue 16: a failback. A replica P of master 0 copies its data
// and certificate and stops following it; A, cut off from masters 3 and 4,
// locks k on {0,1,2}; master 0 then resyncs from P (P's lagging data,
// without k) and is made master again. It never restarted, so its run_id is
// the same; its replication id is not. Neither a client meeting the masters
// now nor the one that watched them all along counts master 0, and the
// watcher does not need a probe to see it: the grant itself says so.
func TestFailbackIsSeenInTheGrant(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, withLaggingReplica(clustertest.NoPersistence), certified(WithQuarantine(30*time.Second)))
	watcher, p := r.watcher, r.replica
	a := cutClient(t, r.clients, []int{3, 4}, WithQuarantine(30*time.Second))
	lease, err := a.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {0,1,2}: %v", err)
	}
	defer lease.Release(ctx)
	before := runID(t, r.clients[0])
	host, port, _ := strings.Cut(p.Addr, ":")
	if err := r.clients[0].Do(ctx, "REPLICAOF", host, port).Err(); err != nil {
		t.Fatal(err)
	}
	eventually(t, 10*time.Second, "master 0 resynced from the lagging replica", func() bool {
		info, _ := r.clients[0].Info(ctx, "replication").Result()
		v, _ := r.clients[0].Get(ctx, "k").Result()
		return strings.Contains(info, "master_link_status:up") && v == ""
	})
	if err := r.clients[0].Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	if runID(t, r.clients[0]) != before {
		t.Fatal("master 0 restarted: the test is about a failback without a restart")
	}
	fresh, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	refusedWhileAHolds(t, r.clients, map[string]refusedWith{"watching": {watcher, []error{ErrPromoted}}, "first-contact": {fresh, []error{ErrPromoted}}})
	if lease.Err() != nil {
		t.Fatalf("A's lease: %v", lease.Err())
	}
}

// Case 2 of issue 16, first half: how the previous process persisted is not
// read from the current one's config. An RDB-only master 0 is killed and
// restarted from a snapshot older than A's lock, then made durable
// (appendonly yes, appendfsync always) before any client looks.
func TestRestartFromAnOlderSnapshotIsNotForgivenByTodaysConfig(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified(WithQuarantine(30*time.Second)))
	watcher := r.watcher
	if err := r.clients[0].Save(ctx).Err(); err != nil { // the snapshot: certificate, no k
		t.Fatal(err)
	}
	a := cutClient(t, r.clients, []int{3, 4}, WithQuarantine(30*time.Second))
	lease, err := a.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {0,1,2}: %v", err)
	}
	defer lease.Release(ctx)
	if err := r.Servers[0].Restart(clustertest.NoPersistence); err != nil { // kill -9, then the old dump.rdb
		t.Fatal(err)
	}
	for _, kv := range [][2]string{{"appendonly", "yes"}, {"appendfsync", "always"}} {
		if err := r.clients[0].ConfigSet(ctx, kv[0], kv[1]).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if v, _ := r.clients[0].Get(ctx, keys.Cert).Result(); v == "" {
		t.Fatal("the snapshot lost the certificate: the test is about one that kept it")
	}
	fresh, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	// Unless its background probe came first, the watcher judges master 0
	// by its grant, whose INFO has the replication id and not the run_id: a
	// new replication id is all it can say until its next probe. The
	// first-contact client probed first.
	refusedWhileAHolds(t, r.clients, map[string]refusedWith{"watching": {watcher, []error{ErrRestarted, ErrPromoted}}, "first-contact": {fresh, []error{ErrRestarted}}})
}

// Case 2 of issue 16, second half: a promoted lagging replica restarted with
// appendfsync always. Its certificate is the old master's (another process),
// so it counts only once certified itself, and that needs its counters
// raised. B cannot reach masters 1 and 2, which hold A's tokens: B must not
// lock at all (only masters 3 and 4 are certified and reachable), and says
// why. With every master reachable, the promoted replica is synced after the
// quarantine and the next token is above A's.
func TestPromotedReplicaRestartedDurableIsSyncedBeforeItCounts(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, withLaggingReplica(clustertest.AOFAlways), certified(WithQuarantine(time.Second)))
	ps, pc := r.replica, r.replicaClient
	a := cutClient(t, r.clients, []int{3, 4}, WithQuarantine(time.Second))
	var last fencing.Token
	for range 3 { // tokens rise on {0,1,2} only
		l, err := a.TryLock(ctx, "k", time.Second)
		if err != nil {
			t.Fatalf("A's lock: %v", err)
		}
		last = l.Token()
		_ = l.Release(ctx)
	}
	if err := r.Servers[0].Kill(); err != nil { // failover to the lagging replica
		t.Fatal(err)
	}
	if err := ps.Restart(clustertest.AOFAlways); err != nil { // durable from now on
		t.Fatal(err)
	}
	masters := append([]redis.UniversalClient{pc}, r.clients[1:]...)
	b := cutClient(t, masters, []int{1, 2}, WithQuarantine(time.Second))
	time.Sleep(1500 * time.Millisecond) // past B's quarantine of the replica
	_, err := b.TryLock(ctx, "k", time.Second)
	if !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("B's TryLock with only masters 3 and 4 certified: %v; want ErrNoQuorum", err)
	}
	eventually(t, 5*time.Second, "B says why the replica cannot be synced", func() bool {
		_, _ = b.TryLock(ctx, "k", time.Second)
		h := b.Health()[0]
		return h.Quarantined && strings.Contains(h.Reason, "only 2 other masters are certified (3 needed)")
	})
	full, err := New(masters, WithQuarantine(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer full.Close()
	lctx, cancel := context.WithTimeout(ctx, 20*time.Second)
	defer cancel()
	var l *Lease
	eventually(t, 20*time.Second, "the replica synced and counting", func() bool {
		if l != nil {
			_ = l.Release(ctx)
		}
		l, err = full.Lock(lctx, "k", time.Second)
		return err == nil && !full.Health()[0].Quarantined
	})
	defer l.Release(ctx)
	if l.Token() <= last {
		t.Fatalf("token %d after the failover is not above A's %d", l.Token(), last)
	}
	if got := bucketCounter(t, pc, "k"); got < last {
		t.Fatalf("the replica's counter %d is below A's token %d after its sync", got, last)
	}
}

// bucketCounter is the counter of key's bucket on one master.
func bucketCounter(t *testing.T, rdb redis.UniversalClient, key string) fencing.Token {
	t.Helper()
	v, err := rdb.Get(context.Background(), keys.Bucket(keys.BucketOf(key, DefaultFenceBuckets))).Result()
	if errors.Is(err, redis.Nil) {
		return 0
	}
	if err != nil {
		t.Fatal(err)
	}
	tok, err := fencing.ParseToken(v)
	if err != nil {
		t.Fatal(err)
	}
	return tok
}

// Case 5 of issue 16: each client's quarantine must cover the longest TTL
// any client uses. A holds k for 6 s; master 0 is flushed; B, whose own
// longest TTL is 500 ms, must not count master 0 while A's lease may live:
// the lambda set of the masters says a 6 s lease is live, and B's sync
// waits for it.
func TestQuarantineCoversAnotherClientsLongerTTL(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified())
	a := cutClient(t, r.clients, []int{3, 4})
	lease, err := a.TryLock(ctx, "k", 6*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {0,1,2}: %v", err)
	}
	defer lease.Release(ctx)
	if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	b, err := New(r.clients)
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	deadline := time.Now().Add(3 * time.Second) // six times B's own TTL
	for time.Now().Before(deadline) {
		if l, err := b.TryLock(ctx, "k", 500*time.Millisecond); err == nil {
			t.Fatalf("B took k while A holds it (token %d, A's %d)", l.Token(), lease.Token())
		}
		time.Sleep(100 * time.Millisecond)
	}
	h := b.Health()[0]
	if !h.Quarantined || !errors.Is(h.Err, ErrDataLost) || time.Until(h.Until) < 2*time.Second {
		t.Fatalf("master 0 seen by B: %+v; want lost its data, quarantined for A's 6 s", h)
	}
	if lease.Err() != nil {
		t.Fatalf("A's lease: %v", lease.Err())
	}
}

// Section 3 of issue 16: a fresh cluster with one master down at first
// contact locks at once: four masters with no record at all are certified
// together (rule S, ⌈(5+3)/2⌉ = 4), so a round without the fifth counts
// them. When the fifth comes back, empty, it waits out the quarantine and
// has its counters raised like any master that lost its data.
func TestFreshClusterWithAMasterDownLocksAtOnce(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	if err := r.Servers[4].Kill(); err != nil {
		t.Fatal(err)
	}
	cl, err := New(r.clients, WithQuarantine(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer cl.Close()
	l, err := cl.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatalf("first TryLock on a fresh cluster with one master down: %v", err)
	}
	first := l.Token()
	_ = l.Release(ctx)
	for i, h := range cl.Health()[:4] {
		if h.Quarantined {
			t.Fatalf("master %d after the first lock: %+v; want certified", i, h)
		}
	}
	if err := r.Servers[4].Restart(clustertest.NoPersistence); err != nil {
		t.Fatal(err)
	}
	eventually(t, 15*time.Second, "master 4 synced and counting", func() bool {
		if l, err := cl.TryLock(ctx, "other", time.Second); err == nil { // operations drive the restart passes
			_ = l.Release(ctx)
		}
		return !cl.Health()[4].Quarantined
	})
	pause(t, r, 0, 1) // the next lock needs master 4's vote
	l, err = cl.TryLock(ctx, "k", time.Second)
	resume(t, r, 0, 1)
	if err != nil {
		t.Fatalf("TryLock needing the synced master 4: %v", err)
	}
	_ = l.Release(ctx)
	if l.Token() <= first || bucketCounter(t, r.clients[4], "k") < first {
		t.Fatalf("token %d (first %d), master 4's counter %d after its sync", l.Token(), first, bucketCounter(t, r.clients[4], "k"))
	}
}

// Section 3 of issue 16: a partial bootstrap. Y's scratch certifies masters
// 0 and 1, and its certificates for 2, 3 and 4 never arrive (Y's writes to
// them are held, then Y is gone); any later client completes the scratch at
// its first look (rule SC) and locks with one master down.
func TestPartialScratchIsCompletedByTheNextClient(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	yMasters := r.Clients(t)
	gates := make([]*commandGate, 5)
	for i := 2; i < 5; i++ {
		gates[i] = newCommandGate(isCertify)
		yMasters[i].(*redis.Client).AddHook(gates[i])
	}
	y, err := New(yMasters, WithQuarantine(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	yctx, stopY := context.WithCancel(ctx)
	go func() { _, _ = y.TryLock(yctx, "y", time.Second) }()
	eventually(t, 10*time.Second, "Y's certificates held for masters 2, 3 and 4, and written on 0 and 1", func() bool {
		for i := 2; i < 5; i++ {
			if gates[i].heldNow() == 0 {
				return false
			}
		}
		for _, i := range []int{0, 1} {
			if v, _ := r.clients[i].Get(ctx, keys.Cert).Result(); v == "" {
				return false
			}
		}
		return true
	})
	stopY()
	t.Cleanup(func() {
		for i := 2; i < 5; i++ {
			gates[i].drop() // Y's held writes never arrive
		}
		_ = y.Close()
	})
	z, err := New(r.clients, WithQuarantine(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer z.Close()
	pause(t, r, 4)
	defer resume(t, r, 4)
	eventually(t, 10*time.Second, "Z completed the scratch and locks with master 4 down", func() bool {
		l, err := z.TryLock(ctx, "k", time.Second)
		if err != nil {
			return false
		}
		_ = l.Release(ctx)
		return true
	})
	for i := range 4 {
		if v, _ := r.clients[i].Get(ctx, keys.Cert).Result(); !strings.Contains(v, " scratch ") {
			t.Fatalf("master %d: certificate %q; want the scratch's", i, v)
		}
	}
}

// Case 3 of issue 16: a certification write that arrives late. Y's scratch
// passed its checks and raised the counters; its certificate for master 0
// is held on the way. Meanwhile another client completes master 0 (rule
// SC), A locks k on {0,1,2}, and master 0 is flushed. Then Y's write
// arrives: it must certify nothing, so that no client counts master 0.
func TestLateCertificationWriteCertifiesNothing(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5)
	yMasters := r.Clients(t)
	gate := newCommandGate(isCertify)
	yMasters[0].(*redis.Client).AddHook(gate)
	y, err := New(yMasters, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer y.Close()
	go func() { _, _ = y.TryLock(ctx, "y", time.Second) }()
	eventually(t, 10*time.Second, "Y's certificate for master 0 held, the others written", func() bool {
		for _, i := range []int{1, 2, 3, 4} {
			if v, _ := r.clients[i].Get(ctx, keys.Cert).Result(); v == "" {
				return false
			}
		}
		return gate.heldNow() == 1
	})
	x, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	warmUp(t, x) // completes master 0
	if v, _ := r.clients[0].Get(ctx, keys.Cert).Result(); v == "" {
		t.Fatal("X did not complete master 0")
	}
	a := cutClient(t, r.clients, []int{3, 4}, WithQuarantine(30*time.Second))
	lease, err := a.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatalf("A's lock on {0,1,2}: %v", err)
	}
	defer lease.Release(ctx)
	if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	gate.open() // Y's late certificate arrives
	eventually(t, 5*time.Second, "Y's held write answered", func() bool { return gate.heldNow() == 0 })
	if v, _ := r.clients[0].Get(ctx, keys.Cert).Result(); v != "" {
		t.Fatalf("a late certification write certified the flushed master 0: %q", v)
	}
	fresh, err := New(r.clients, WithQuarantine(30*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer fresh.Close()
	refusedWhileAHolds(t, r.clients, map[string]refusedWith{"late writer": {y, []error{ErrDataLost}}, "first-contact": {fresh, []error{ErrDataLost}}})
}

// Case 4 of issue 16: a counter sync's sources are judged as they are read,
// never by what a probe said before. A's tokens rise on {0,1,2} only;
// master 1 kept a snapshot from before the last ones. Master 0 is flushed.
// At the moment X's sync of master 0 writes its guard (after the pass that
// probed every master certified but master 0), master 1 restarts from its
// old snapshot (the certificate of another process, a low counter) and
// master 2, the one certified master that kept A's last token, stalls. The
// sync may then read only {1, 3, 4}: master 1 is not certified when it is
// read, so two certified sources are left of the three needed, and master
// 0 must stay out rather than be certified with a counter below A's token.
// Judged by the probe instead (the old shortcut), master 1 counts as a
// certified source and master 0 is certified below A's token: the test
// fails on the first check. Once master 2 answers again, the sync reads it
// and the next token is above A's.
func TestSyncSourceIsJudgedAsItIsRead(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified(WithQuarantine(time.Second)))
	w := r.watcher
	a := cutClient(t, r.clients, []int{3, 4}, WithQuarantine(time.Second))
	lockOnce := func() fencing.Token {
		l, err := a.TryLock(ctx, "k", time.Second)
		if err != nil {
			t.Fatalf("A's lock: %v", err)
		}
		_ = l.Release(ctx)
		return l.Token()
	}
	lockOnce()
	if err := r.clients[1].Save(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	lockOnce()
	last := lockOnce()
	if got := bucketCounter(t, r.clients[3], "k"); got >= last {
		t.Fatalf("master 3's counter %d is not below A's last token %d: the test needs sources without it", got, last)
	}
	// Only X syncs from here on: the watcher and A stop.
	_ = w.Close()
	_ = a.Close()

	hook := &clustertest.OnceBefore{Match: writesSyncGuard, Do: func() error {
		if err := r.Servers[1].Restart(clustertest.NoPersistence); err != nil { // from the old snapshot
			return err
		}
		return r.Servers[2].Pause()
	}}
	r.clients[0].(*redis.Client).AddHook(hook)
	defer resume(t, r, 2)

	x, err := New(r.clients, WithQuarantine(time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer x.Close()
	if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// X's attempts on another key drive its restart passes: the first sees
	// master 0's loss, one after the quarantine syncs it. k itself is not
	// locked, so its counters stay where A left them.
	eventually(t, 20*time.Second, "X's sync of master 0 tried and ended", func() bool {
		if l, err := x.TryLock(ctx, "other", time.Second); err == nil {
			_ = l.Release(ctx)
		}
		h := x.Health()[0]
		return hook.Fired() && (!h.Quarantined || strings.Contains(h.Reason, "too few masters"))
	})
	if err := hook.Err(); err != nil {
		t.Fatal(err)
	}
	if got := bucketCounter(t, r.clients[1], "k"); got >= last {
		t.Fatalf("master 1's snapshot counter %d is not below A's last token %d: the test needs a stale source", got, last)
	}
	if h := x.Health()[0]; !h.Quarantined {
		t.Fatalf("master 0 was certified from {1 (restarted from an old snapshot), 3, 4} with its counter at %d, below A's token %d: %+v",
			bucketCounter(t, r.clients[0], "k"), last, h)
	}
	if l, err := x.TryLock(ctx, "k", time.Second); err == nil {
		_ = l.Release(ctx)
		t.Fatalf("X locked k with token %d (A's last %d) while only masters 3 and 4 count", l.Token(), last)
	}

	resume(t, r, 2)
	var l *Lease
	eventually(t, 15*time.Second, "master 0 synced once master 2 answers", func() bool {
		if l != nil {
			_ = l.Release(ctx)
		}
		l, err = x.TryLock(ctx, "k", time.Second)
		return err == nil && !x.Health()[0].Quarantined
	})
	defer l.Release(ctx)
	if l.Token() <= last || bucketCounter(t, r.clients[0], "k") < last {
		t.Fatalf("token %d, master 0's counter %d after its sync; want both at or above A's %d", l.Token(), bucketCounter(t, r.clients[0], "k"), last)
	}
}

// writesSyncGuard reports whether cmd is a script call with a key under
// keys.SyncPrefix: the first writes a counter sync's guard, after the pass
// that chose the sync's sources probed them and before the sync reads them.
func writesSyncGuard(cmd redis.Cmder) bool {
	if name := cmd.Name(); name != "evalsha" && name != "eval" {
		return false
	}
	for _, a := range cmd.Args() {
		if s, ok := a.(string); ok && strings.HasPrefix(s, keys.SyncPrefix) {
			return true
		}
	}
	return false
}

// Section 3 of issue 16: a majority of non-durable masters restarted empty
// is more than a majority quorum survives. Nothing brings locking back by
// itself; Health says why, in words an operator can act on.
func TestMajorityLossIsReportedNotRepairedByItself(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified(WithQuarantine(500*time.Millisecond)))
	w := r.watcher
	for _, i := range []int{0, 1, 2} {
		if err := r.Servers[i].Restart(clustertest.NoPersistence); err != nil {
			t.Fatal(err)
		}
	}
	pause(t, r, 4) // no round every master grants
	defer resume(t, r, 4)
	deadline := time.Now().Add(3 * time.Second)
	for time.Now().Before(deadline) {
		if _, err := w.TryLock(ctx, "k", 500*time.Millisecond); err == nil {
			t.Fatal("locked with three of five masters restarted empty")
		}
		time.Sleep(100 * time.Millisecond)
	}
	h := w.Health()[0]
	if !h.Quarantined || !strings.Contains(h.Reason, "3 of the 5 masters lost their data at once") ||
		!strings.Contains(h.Reason, "only 2 keep their data, 3 are needed to raise counters from") || !strings.Contains(h.Reason, "redlockctl repair") {
		t.Fatalf("master 0 after a majority restarted empty: %+v", h)
	}
}
