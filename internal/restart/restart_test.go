package restart

import (
	"context"
	"errors"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

const buckets = 16

func members(t *testing.T, c *clustertest.Cluster) []Member {
	t.Helper()
	var out []Member
	for i, rc := range c.Clients(t) {
		out = append(out, Member{Index: i, RDB: rc})
	}
	return out
}

func certified(t *testing.T, m Member) bool {
	t.Helper()
	st, err := Inspect(context.Background(), m.RDB, 0)
	if err != nil {
		t.Fatal(err)
	}
	return st.Certified()
}

func counter(t *testing.T, m Member, key string) fencing.Token {
	t.Helper()
	v, err := m.RDB.Get(context.Background(), key).Result()
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

// A guard is written only while the master is in the lineage read before:
// after a FLUSHALL (a new incarnation) or a restart (a new run_id) the same
// write is refused and nothing is written.
func TestGuardIsRefusedAfterALoss(t *testing.T) {
	ctx := context.Background()
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	m := Member{RDB: s.Client(t)}
	for _, loss := range []string{"flushall", "restart"} {
		st, err := Inspect(ctx, m.RDB, 0)
		if err != nil {
			t.Fatal(err)
		}
		switch loss {
		case "flushall":
			if err := m.RDB.FlushAll(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		case "restart":
			if err := s.Restart(clustertest.AOFAlways); err != nil {
				t.Fatal(err)
			}
		}
		_, err = writeGuard(ctx, m.RDB, keys.Scratch, st.Lineage, st.Lineage.String()+" scratch x 0", 0, true)
		if !errors.Is(err, ErrRefused) {
			t.Fatalf("guard after a %s: %v; want ErrRefused", loss, err)
		}
		if n, _ := m.RDB.Exists(ctx, keys.Scratch).Result(); n != 0 {
			t.Fatalf("a refused guard was written after a %s", loss)
		}
	}
}

// A certification is refused when its guard is gone (a FLUSHALL) or names
// another lineage (a restart since the guard), and accepted otherwise.
func TestCertifyIsGuarded(t *testing.T) {
	ctx := context.Background()
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	m := Member{RDB: s.Client(t)}
	guardOf := func() (string, string) {
		st, err := Inspect(ctx, m.RDB, 0)
		if err != nil {
			t.Fatal(err)
		}
		g := st.Lineage.String() + " sync n"
		if _, err := writeGuard(ctx, m.RDB, "quorumlock:sync:n", st.Lineage, g, time.Minute, false); err != nil {
			t.Fatal(err)
		}
		return "quorumlock:sync:n", g
	}
	key, g := guardOf()
	if err := m.RDB.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := certify(ctx, m.RDB, key, g, "sync n", true); !errors.Is(err, ErrRefused) {
		t.Fatalf("certify after a FLUSHALL: %v; want ErrRefused", err)
	}
	key, g = guardOf()
	if err := s.Restart(clustertest.AOFAlways); err != nil { // the guard survives: the lineage does not
		t.Fatal(err)
	}
	if _, err := certify(ctx, m.RDB, key, g, "sync n", true); !errors.Is(err, ErrRefused) {
		t.Fatalf("certify after a restart: %v; want ErrRefused", err)
	}
	key, g = guardOf()
	cert, err := certify(ctx, m.RDB, key, g, "sync n", true)
	if err != nil || !certified(t, m) || !strings.HasSuffix(cert, " sync n") {
		t.Fatalf("certify with its guard in place: %q, %v", cert, err)
	}
	if n, _ := m.RDB.Exists(ctx, key).Result(); n != 0 {
		t.Fatal("the sync guard was kept after the certification")
	}
}

// Rule S on five fresh masters: every one certified, every counter (buckets,
// per-key counters of an earlier version, the floor, the lambda set) raised
// to the maximum over them; two clients scratching at once write the same
// guards and both succeed.
func TestScratchCertifiesAFreshCluster(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 5)
	ms := members(t, c)
	legacy := "order:7"
	seed := []struct {
		m          int
		key, value string
	}{{1, keys.Bucket(3), "7"}, {2, keys.Legacy(legacy), "9"}, {4, keys.Floor, "5"}}
	for _, s := range seed {
		if err := ms[s.m].RDB.Set(ctx, s.key, s.value, 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms[3].RDB.ZAdd(ctx, keys.Lambda, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "30000"}).Err(); err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	results := make([][]int, 2)
	errs := make([]error, 2)
	for i := range 2 {
		wg.Go(func() { results[i], errs[i] = Scratch(ctx, ms, nil, 5, 3, buckets) })
	}
	wg.Wait()
	for i := range 2 {
		if errs[i] != nil || len(results[i]) != 5 {
			t.Fatalf("scratch %d of two at once: certified %v, %v", i, results[i], errs[i])
		}
	}
	for _, m := range ms {
		st, err := Inspect(ctx, m.RDB, buckets)
		if err != nil {
			t.Fatal(err)
		}
		if !st.Certified() || st.Counters.Buckets[3] != 7 || st.Counters.Buckets[keys.BucketOf(legacy, buckets)] != 9 ||
			st.Counters.Floor != 5 || st.LiveLambda() != 30*time.Second {
			t.Fatalf("master %d after the scratch: certified %v, counters %+v, lambda %v", m.Index, st.Certified(), st.Counters, st.LiveLambda())
		}
	}
}

// Rule S refuses: fewer than ⌈(M+q)/2⌉ record-free masters; a master that
// carries a certificate anywhere (more masters lost data than the fault
// model allows); a member that carries another scratch's guard.
func TestScratchRefuses(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 5)
	ms := members(t, c)
	if _, err := Scratch(ctx, ms[:3], nil, 5, 3, buckets); !errors.Is(err, ErrNotScratch) {
		t.Fatalf("scratch of 3 of 5: %v; want ErrNotScratch", err)
	}
	if _, err := Scratch(ctx, ms[:4], nil, 5, 3, buckets); err != nil {
		t.Fatalf("scratch of 4 of 5 (one down): %v", err)
	}
	for _, m := range ms[:3] {
		if err := m.RDB.FlushAll(ctx).Err(); err != nil {
			t.Fatal(err)
		}
	}
	// Masters 0-2 lost everything, 3 keeps its certificate: 4 record-free
	// (0, 1, 2 and the never-certified 4) beside a certificate.
	_, err := Scratch(ctx, []Member{ms[0], ms[1], ms[2], ms[4]}, []Member{ms[3]}, 5, 3, buckets)
	if !errors.Is(err, ErrNotScratch) || !strings.Contains(err.Error(), "repair") {
		t.Fatalf("scratch beside a certified master: %v; want ErrNotScratch pointing at repair", err)
	}
	for _, m := range ms[:3] {
		if certified(t, m) {
			t.Fatalf("master %d certified by a refused scratch", m.Index)
		}
	}
}

// Rule SC: a member whose guard names its lineage is completed; a guard that
// names an older lineage (the master restarted since) is not.
func TestCompleteNeedsItsGuardInItsLineage(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	ms := members(t, c)
	st, err := Inspect(ctx, ms[0].RDB, 0)
	if err != nil {
		t.Fatal(err)
	}
	g := probe.Scratch{Lineage: st.Lineage, ID: "s1", Members: "0,1,2"}
	if _, err := writeGuard(ctx, ms[0].RDB, keys.Scratch, g.Lineage, g.String(), 0, true); err != nil {
		t.Fatal(err)
	}
	if err := c.Servers[0].Restart(clustertest.AOFAlways); err != nil {
		t.Fatal(err)
	}
	if err := Complete(ctx, ms[0], g); !errors.Is(err, ErrRefused) || certified(t, ms[0]) {
		t.Fatalf("completion of a restarted member: %v; want ErrRefused", err)
	}
	st, err = Inspect(ctx, ms[1].RDB, 0)
	if err != nil {
		t.Fatal(err)
	}
	g = probe.Scratch{Lineage: st.Lineage, ID: "s1", Members: "0,1,2"}
	if _, err := writeGuard(ctx, ms[1].RDB, keys.Scratch, g.Lineage, g.String(), 0, true); err != nil {
		t.Fatal(err)
	}
	if err := Complete(ctx, ms[1], g); err != nil || !certified(t, ms[1]) {
		t.Fatalf("completion of a member in its lineage: %v", err)
	}
}

// Rule Y: a sync needs M − q + 1 certified sources, each read with its
// certificate (a source restarted since it was certified does not count);
// or every other master. ready sees the longest live TTL of the sources
// and can stop the sync before anything is raised.
func TestSyncReadsEnoughSources(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 5, clustertest.AOFAlways)
	ms := members(t, c)
	if _, err := Scratch(ctx, ms, nil, 5, 3, buckets); err != nil {
		t.Fatal(err)
	}
	for _, m := range ms[1:] {
		if err := m.RDB.Set(ctx, keys.Bucket(2), "41", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if err := ms[2].RDB.ZAdd(ctx, keys.Lambda, redis.Z{Score: float64(time.Now().Add(time.Hour).UnixMilli()), Member: "20000"}).Err(); err != nil {
		t.Fatal(err)
	}
	if err := ms[0].RDB.FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	if err := c.Servers[1].Restart(clustertest.AOFAlways); err != nil { // uncertified now: no source
		t.Fatal(err)
	}
	never := func(time.Duration) error { return errors.New("not yet") }
	go4 := func(time.Duration) error { return nil }
	// Certified sources: 2, 3 (two of the three needed).
	if _, err := Sync(ctx, ms[0], Sources{Masters: []Member{ms[1], ms[2], ms[3]}, Certified: 3}, buckets, go4); !errors.Is(err, ErrTooFewSources) {
		t.Fatalf("sync from two certified masters and a restarted one: %v; want ErrTooFewSources", err)
	}
	src := Sources{Masters: []Member{ms[1], ms[2], ms[3], ms[4]}, Certified: 3}
	var seen time.Duration
	_, err := Sync(ctx, ms[0], src, buckets, func(l time.Duration) error { seen = l; return never(l) })
	if err == nil || seen != 20*time.Second || certified(t, ms[0]) || counter(t, ms[0], keys.Bucket(2)) != 0 {
		t.Fatalf("sync stopped by ready: %v, lambda %v; want it stopped before anything was raised, having seen 20s", err, seen)
	}
	if _, err := Sync(ctx, ms[0], src, buckets, go4); err != nil || !certified(t, ms[0]) || counter(t, ms[0], keys.Bucket(2)) != 41 {
		t.Fatalf("sync from 3 certified masters: %v", err)
	}
	// Every other master answering, certified or not: master 1 (restarted).
	if _, err := Sync(ctx, ms[1], Sources{Masters: []Member{ms[0], ms[2], ms[3], ms[4]}}, buckets, go4); err != nil || !certified(t, ms[1]) {
		t.Fatalf("sync from every other master: %v", err)
	}
}

// Rule R: the floor rises above every counter and to the operator's clock,
// and every master is certified.
func TestRepairRaisesTheFloor(t *testing.T) {
	ctx := context.Background()
	c := clustertest.Start(t, 3)
	ms := members(t, c)
	if err := ms[2].RDB.Set(ctx, keys.Bucket(1), "12", 0).Err(); err != nil {
		t.Fatal(err)
	}
	now := time.Date(2027, 1, 1, 0, 0, 0, 0, time.UTC)
	plan, all, err := PlanRepair(ctx, ms, buckets, now)
	if err != nil || plan.Highest != 12 || plan.Floor != TimeFloor(now) || len(plan.Reachable) != 3 {
		t.Fatalf("plan: %+v, %v", plan, err)
	}
	if want := fencing.Token(365 * 24 * 3600 * 1_000_000); plan.Floor != want {
		t.Fatalf("floor a year after the epoch: %d, want %d", plan.Floor, want)
	}
	done, err := Repair(ctx, ms, all)
	if err != nil || len(done) != 3 {
		t.Fatalf("repair: %v, %v", done, err)
	}
	for _, m := range ms {
		if !certified(t, m) || counter(t, m, keys.Floor) != plan.Floor || counter(t, m, keys.Bucket(1)) != 12 {
			t.Fatalf("master %d after the repair: certified %v, floor %d", m.Index, certified(t, m), counter(t, m, keys.Floor))
		}
	}
}
