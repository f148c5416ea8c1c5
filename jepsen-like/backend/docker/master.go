package docker

import (
	"context"
	"errors"
	"fmt"
	"net/netip"
	"sync"
	"time"

	"github.com/moby/moby/client"
	"github.com/redis/go-redis/v9"
	"github.com/testcontainers/testcontainers-go"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

var loopback = netip.MustParseAddr("127.0.0.1")

// Master is one master container; a restart without persistence or a
// failover puts another container in its place.
type Master struct {
	b           *Backend
	name        string
	persistence backend.Persistence

	mu      sync.Mutex
	ctr     *testcontainers.DockerContainer
	addr    string
	paused  bool
	killed  bool
	cut     bool // Disconnect's rules are in the container's namespace
	replica *testcontainers.DockerContainer
	// replicaCut is the master's IP that the replica's namespace drops
	// packets to and from (DetachReplica), until Failover promotes it.
	replicaCut string
	n          int // containers made for this master, for aliases
}

var _ backend.Master = (*Master)(nil)

// Name returns "m<i>".
func (m *Master) Name() string { return m.name }

// Addr is the published 127.0.0.1 address of the current container.
func (m *Master) Addr() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.addr
}

func (m *Master) id() string {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.ctr.GetContainerID()
}

// replace starts a fresh container under the master's network alias.
func (m *Master) replace(ctx context.Context, p backend.Persistence) error {
	c, err := m.b.run(ctx, m.name, m.name, redisArgs(p))
	if err != nil {
		return err
	}
	addr, err := hostAddr(ctx, c)
	if err != nil {
		return err
	}
	m.mu.Lock()
	old := m.ctr
	m.ctr, m.addr, m.paused, m.killed, m.cut, m.persistence = c, addr, false, false, false, p
	m.mu.Unlock()
	if old != nil {
		_, _ = m.b.cli.ContainerRemove(ctx, old.GetContainerID(), client.ContainerRemoveOptions{Force: true})
	}
	return nil
}

// Pause runs docker pause.
func (m *Master) Pause(ctx context.Context) error {
	if _, err := m.b.cli.ContainerPause(ctx, m.id(), client.ContainerPauseOptions{}); err != nil {
		return fmt.Errorf("docker: pause %s: %w", m.name, err)
	}
	m.mu.Lock()
	m.paused = true
	m.mu.Unlock()
	return nil
}

// Resume runs docker unpause.
func (m *Master) Resume(ctx context.Context) error {
	if _, err := m.b.cli.ContainerUnpause(ctx, m.id(), client.ContainerUnpauseOptions{}); err != nil {
		return fmt.Errorf("docker: unpause %s: %w", m.name, err)
	}
	m.mu.Lock()
	m.paused = false
	m.mu.Unlock()
	return nil
}

// Kill sends SIGKILL to the container.
func (m *Master) Kill(ctx context.Context) error {
	if _, err := m.b.cli.ContainerKill(ctx, m.id(), client.ContainerKillOptions{Signal: "KILL"}); err != nil {
		return fmt.Errorf("docker: kill %s: %w", m.name, err)
	}
	m.mu.Lock()
	m.killed, m.paused = true, false
	m.mu.Unlock()
	return nil
}

// Start brings a killed master back: with AOFAlways (on a master that ran
// with it) the same container starts again and replays its AOF; otherwise an
// empty container takes its place.
func (m *Master) Start(ctx context.Context, p backend.Persistence) error {
	if p == backend.FromSnapshot {
		return fmt.Errorf("%w: a restart from an older snapshot runs on the local backend only", backend.ErrUnsupported)
	}
	m.mu.Lock()
	ctr, per := m.ctr, m.persistence
	m.mu.Unlock()
	if p == backend.AOFAlways && per == backend.AOFAlways {
		if err := ctr.Start(ctx); err != nil {
			return fmt.Errorf("docker: start %s: %w", m.name, err)
		}
		addr, err := hostAddr(ctx, ctr) // docker may publish on another port
		if err != nil {
			return err
		}
		m.mu.Lock()
		m.addr, m.killed, m.cut = addr, false, false // a new namespace, without the rules
		m.mu.Unlock()
		return waitPing(ctx, addr)
	}
	return m.replace(ctx, p)
}

// Flush runs FLUSHALL.
func (m *Master) Flush(ctx context.Context) error {
	if err := flushAll(ctx, m.Addr()); err != nil {
		return fmt.Errorf("docker: flush %s: %w", m.name, err)
	}
	return nil
}

// Snapshot is not supported on containers: a restart without persistence
// replaces the container, which keeps no RDB to roll back to.
func (m *Master) Snapshot(context.Context) error {
	return fmt.Errorf("%w: snapshots run on the local backend only", backend.ErrUnsupported)
}

// SetClockOffset shifts the wall clock of the master's container (and of
// its replica, which takes its place on a failover) by d: it writes the
// master's offset file, which the shim in the container reads within 10
// ms, and waits until the master's TIME shows it. ErrUnsupported when the
// backend was started without the clock shim.
func (m *Master) SetClockOffset(ctx context.Context, d time.Duration) error {
	if m.b.clockDir == "" {
		return fmt.Errorf("%w: master %s runs without the clock shim (docker.Options.ClockShim)", backend.ErrUnsupported, m.name)
	}
	if err := backend.WriteClockOffset(clockFile(m.b.clockDir, m.name), d); err != nil {
		return fmt.Errorf("docker: master %s: %w", m.name, err)
	}
	if err := backend.WaitForClockOffset(ctx, m.Addr(), d); err != nil {
		return fmt.Errorf("docker: master %s: %w", m.name, err)
	}
	return nil
}

func (m *Master) heal(ctx context.Context) error {
	m.mu.Lock()
	paused, killed := m.paused, m.killed
	m.mu.Unlock()
	var err error
	if killed {
		err = m.replace(ctx, backend.NoPersistence)
	} else {
		err = m.Reconnect(ctx)
		if paused {
			err = errors.Join(err, m.Resume(ctx))
		}
	}
	if err == nil && m.b.clockDir != "" {
		err = m.SetClockOffset(ctx, 0)
	}
	return err
}

func waitPing(ctx context.Context, addr string) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(30 * time.Second)
	for {
		pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
		err := c.Ping(pctx).Err()
		cancel()
		if err == nil {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return errors.Join(errors.New("docker: master did not answer PING"), err)
		}
		time.Sleep(50 * time.Millisecond)
	}
}
