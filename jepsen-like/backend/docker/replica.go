package docker

import (
	"context"
	"fmt"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// DetachReplica starts a replica container of the master, waits until it
// synced, and then partitions the two: iptables DROP rules in the replica's
// network namespace for packets to and from the master's IP on the
// backend's network. The replica stays a replica whose link is down (as
// one behind a real network partition: no REPLICAOF NO ONE, which the local
// backend uses), so it misses every later write; Failover promotes it.
func (m *Master) DetachReplica(ctx context.Context) error {
	m.mu.Lock()
	if m.replica != nil {
		m.mu.Unlock()
		return nil
	}
	m.n++
	alias := fmt.Sprintf("%s-replica%d", m.name, m.n)
	ctr := m.ctr
	m.mu.Unlock()
	masterIP, err := ctr.ContainerIP(ctx)
	if err != nil || masterIP == "" {
		return fmt.Errorf("docker: the IP of %s: %q, %v", m.name, masterIP, err)
	}
	r, err := m.b.run(ctx, alias, m.name, redisArgs(backend.NoPersistence, "--replicaof", m.name, "6379"))
	if err != nil {
		return err
	}
	addr, err := hostAddr(ctx, r)
	if err != nil {
		return err
	}
	if err := backend.WaitSynced(ctx, addr, 50*time.Millisecond); err != nil {
		return fmt.Errorf("docker: replica of %s: %w", m.name, err)
	}
	if err := peerRules(ctx, r, masterIP, "-I"); err != nil {
		_ = peerRules(context.WithoutCancel(ctx), r, masterIP, "-D") // undo a half cut
		return fmt.Errorf("docker: partition the replica of %s from it: %w", m.name, err)
	}
	m.mu.Lock()
	m.replica, m.replicaCut = r, masterIP
	m.mu.Unlock()
	return nil
}

// Failover kills the master's container and puts the partitioned replica
// in its place: promoted (REPLICAOF NO ONE) while still cut off, so that it
// keeps the data it had, and only then healed of the partition.
func (m *Master) Failover(ctx context.Context) error {
	m.mu.Lock()
	r, old, cut := m.replica, m.ctr, m.replicaCut
	m.mu.Unlock()
	if r == nil {
		return fmt.Errorf("docker: failover of %s: no detached replica (call DetachReplica first)", m.name)
	}
	addr, err := hostAddr(ctx, r)
	if err != nil {
		return err
	}
	_, kerr := m.b.cli.ContainerKill(ctx, old.GetContainerID(), client.ContainerKillOptions{Signal: "KILL"})
	m.mu.Lock()
	m.ctr, m.addr, m.replica, m.replicaCut, m.paused, m.killed, m.cut, m.persistence = r, addr, nil, "", false, false, false, backend.NoPersistence
	m.mu.Unlock()
	if kerr != nil {
		return fmt.Errorf("docker: kill %s: %w", m.name, kerr)
	}
	if err := promote(ctx, addr); err != nil {
		return fmt.Errorf("docker: promote the replica of %s: %w", m.name, err)
	}
	if err := peerRules(ctx, r, cut, "-D"); err != nil {
		return fmt.Errorf("docker: heal the replica of %s: %w", m.name, err)
	}
	return nil
}

// promote makes the replica at addr a master (REPLICAOF NO ONE).
func promote(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	return c.Do(ctx, "REPLICAOF", "NO", "ONE").Err()
}

// peerRules inserts (-I) or deletes (-D), in ctr's network namespace, DROP
// rules for every packet to and from peer: a partition between two
// containers that leaves both reachable from everything else.
func peerRules(ctx context.Context, ctr *testcontainers.DockerContainer, peer, op string) error {
	return nsIptables(ctx, ctr, op, [][]string{{"INPUT", "-s", peer, "-j", "DROP"}, {"OUTPUT", "-d", peer, "-j", "DROP"}})
}
