package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Rule V counts a grant only from a master that answers as a master, and
// the role is the only part of the rule that sees this case. A master made
// a replica (REPLICAOF) keeps its run_id and its replication id until its
// first sync with its new master (Redis 7.0.15), and with
// replica-read-only no it still takes writes: its certificate names its
// lineage, its incarnation is there, and the acquire script's SET succeeds.
// Its grant must not count by itself: the sync that follows replaces its
// data with its master's, A's key included. A's last probe of master 0 saw
// a master (the probes after it are held on the way), so A asks master 0
// and judges it by the INFO after the grant alone. Counted by lineage
// without the role, A would hold k on {0, 1, 2}.
func TestAMasterTurnedReplicaDoesNotCountBeforeItsSync(t *testing.T) {
	ctx := context.Background()
	r := newRig(t, 5, certified(WithQuarantine(30*time.Second)))
	probes := newPipelineGate("info", false) // probe.Master's pipeline starts with INFO
	t.Cleanup(probes.open)
	m0 := r.Servers[0].Client(t)
	m0.AddHook(probes)
	masters := append([]redis.UniversalClient{m0}, r.clients[1:]...)
	a := cutClient(t, masters, []int{3, 4}, WithQuarantine(30*time.Second))
	warmUp(t, a)
	if h := a.Health()[0]; h.Quarantined {
		t.Fatalf("master 0 before the test: %+v; want it counting", h)
	}
	probes.shut()
	replid := func() (string, string) {
		info, err := r.clients[0].Info(ctx, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		return infoField(info, "role:"), infoField(info, "master_replid:")
	}
	_, before := replid()
	r.admin(t, 0, "CONFIG", "SET", "replica-read-only", "no")
	r.admin(t, 0, "REPLICAOF", "127.0.0.1", "1") // a master it cannot reach yet: no sync
	if role, after := replid(); role != "slave" || after != before {
		t.Fatalf("master 0 after REPLICAOF: role %s, master_replid %s (was %s); the test is about a replica still in its lineage", role, after, before)
	}
	eventually(t, 5*time.Second, "master 0 answers A's connection", func() bool { return m0.Ping(ctx).Err() == nil })
	l, err := a.TryLock(ctx, "k", 30*time.Second)
	if err == nil {
		_ = l.Release(ctx)
		t.Fatalf("A holds k (token %d) counting master 0, which answers as a replica", l.Token())
	}
	if !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("A's TryLock with master 0 a replica: %v; want ErrNoQuorum", err)
	}
	if !probes.sentKey("k") {
		t.Fatal("A did not ask master 0: the test must reach rule V's role check")
	}
}

// infoField is the value of an INFO line starting with name.
func infoField(info, name string) string {
	_, v, ok := strings.Cut(info, name)
	if !ok {
		return ""
	}
	return strings.TrimSpace(strings.SplitN(v, "\n", 2)[0])
}
