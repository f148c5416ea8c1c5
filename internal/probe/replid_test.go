package probe

import (
	"context"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// Rule V compares a master's replication id, not its run_id
// (Lineage.Same). This is the fact that makes it sound, tried on real
// redis-server processes: whenever a server answers as a master, its
// master_replid is one no master has shown before. Redis draws it at random
// when the process starts and at every promotion; it restores an id from
// disk only into a replica, which does not count. Each step below is a
// restart or a promotion that must show a new id: from an RDB written while
// the master had a replica (so the RDB carries its replication id), from an
// AOF, with no persistence, and a server restarted as a replica from its own
// RDB, then promoted.
func TestReplicationIDIsNewForEveryMastership(t *testing.T) {
	ctx := context.Background()
	s := clustertest.StartServer(t, clustertest.NoPersistence)
	seen := map[string]string{} // master_replid -> the step that showed it
	replication := func(c *redis.Client) (role, replID string) {
		t.Helper()
		info, err := c.Info(ctx, "replication").Result()
		if err != nil {
			t.Fatal(err)
		}
		l, role, err := ParseLineage(info)
		if err != nil {
			t.Fatal(err)
		}
		return role, l.ReplID
	}
	newMastership := func(c *redis.Client, step string) {
		t.Helper()
		role, id := replication(c)
		if role != "master" {
			t.Fatalf("%s: role %s, want master", step, role)
		}
		if earlier, ok := seen[id]; ok {
			t.Fatalf("%s: master_replid %s was already shown by a master (%s)", step, id, earlier)
		}
		seen[id] = step
	}
	synced := func(c *redis.Client) {
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			info, err := c.Info(ctx, "replication").Result()
			if err == nil && strings.Contains(info, "master_link_status:up") {
				return
			}
			if time.Now().After(deadline) {
				t.Fatalf("replica never synced: %v %q", err, info)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	save := func(c *redis.Client) { // a replica's sync may hold a BGSAVE: wait for it
		t.Helper()
		deadline := time.Now().Add(20 * time.Second)
		for {
			err := c.Save(ctx).Err()
			if err == nil {
				return
			}
			if !strings.Contains(err.Error(), "in progress") || time.Now().After(deadline) {
				t.Fatal(err)
			}
			time.Sleep(20 * time.Millisecond)
		}
	}
	// restartFromRDB writes key, saves an RDB and restarts srv on it.
	restartFromRDB := func(srv *clustertest.Server, c *redis.Client, key string) {
		t.Helper()
		if err := c.Set(ctx, key, "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
		save(c)
		if err := srv.Restart(clustertest.NoPersistence); err != nil {
			t.Fatal(err)
		}
	}
	sc := s.Client(t)
	newMastership(sc, "s started")
	r := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithArgs("--replicaof", "127.0.0.1", strconv.Itoa(s.Port)))
	rc := r.Client(t)
	synced(rc)
	if role, _ := replication(rc); role != "slave" {
		t.Fatalf("r: role %s, want slave", role)
	}
	if _, id := replication(sc); seen[id] == "" {
		seen[id] = "s with its first replica" // a master may start a backlog under a new id
	}

	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	newMastership(rc, "r promoted")

	// r saves an RDB as a master that was a replica (it carries r's
	// replication id), and comes back configured as s's replica: Redis
	// restores the id into a replica, which does not count; promoted, r
	// shows a new one.
	restartFromRDB(r, rc, "x")
	if role, id := replication(rc); role != "slave" {
		t.Fatalf("r restarted with --replicaof: role %s (id %s), want slave", role, id)
	} else {
		t.Logf("r restarted as a replica shows master_replid %s (%s)", id, seen[id])
	}
	if err := rc.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		t.Fatal(err)
	}
	newMastership(rc, "r restarted as a replica, then promoted")

	// s, which had a replica (so its RDB carries its replication id), from
	// an RDB; then from an AOF; then empty.
	restartFromRDB(s, sc, "y")
	if v, _ := sc.Get(ctx, "y").Result(); v != "1" {
		t.Fatal("s did not load its RDB: the step is about a restart from one")
	}
	newMastership(sc, "s restarted from an RDB")
	if err := s.Restart(clustertest.AOFAlways); err != nil {
		t.Fatal(err)
	}
	newMastership(sc, "s restarted with appendonly yes")
	if err := sc.Set(ctx, "z", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(clustertest.AOFAlways); err != nil {
		t.Fatal(err)
	}
	if v, _ := sc.Get(ctx, "z").Result(); v != "1" {
		t.Fatal("s did not load its AOF: the step is about a restart from one")
	}
	newMastership(sc, "s restarted from an AOF")
	if err := sc.Do(ctx, "CONFIG", "SET", "appendonly", "no").Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(clustertest.NoPersistence); err != nil {
		t.Fatal(err)
	}
	newMastership(sc, "s restarted")
}
