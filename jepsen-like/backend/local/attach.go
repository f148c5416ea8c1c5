package local

import (
	"context"
	"fmt"
	"os"
	"path/filepath"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

var _ backend.ReplicaAttacher = (*Master)(nil)

// AttachReplica starts a replica of the master, waits until it synced, and
// lets it follow the master: DetachReplica or Kill cuts it off.
func (m *Master) AttachReplica(ctx context.Context) error {
	m.mu.Lock()
	if m.replica != nil {
		m.mu.Unlock()
		return nil
	}
	r := m.newReplica()
	m.replica, m.following = r, true
	m.mu.Unlock()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	if err := r.startFresh(ctx, backend.NoPersistence); err != nil {
		return fmt.Errorf("local: replica of %s: %w", m.name, err)
	}
	if err := backend.WaitSynced(ctx, r.addr(), 20*time.Millisecond); err != nil {
		return fmt.Errorf("local: replica of %s: %w", m.name, err)
	}
	return nil
}

// newReplica is a replica process of the current primary (not started).
// m.mu must be held.
func (m *Master) newReplica() *process {
	return &process{binary: m.binary, dir: filepath.Join(m.dir, "replica"+strconv.Itoa(len(m.old))), env: m.env,
		extra: []string{"--replicaof", "127.0.0.1", strconv.Itoa(m.cur.port)}}
}

// cutReplica detaches a replica that still follows the master (REPLICAOF
// NO ONE): it keeps what it has and misses every later write.
func (m *Master) cutReplica(ctx context.Context) error {
	m.mu.Lock()
	r, following := m.replica, m.following
	m.following = false
	m.mu.Unlock()
	if r == nil || !following {
		return nil
	}
	c := redis.NewClient(&redis.Options{Addr: r.addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	if err := c.Do(ctx, "REPLICAOF", "NO", "ONE").Err(); err != nil {
		return fmt.Errorf("local: detach the replica of %s: %w", m.name, err)
	}
	return nil
}
