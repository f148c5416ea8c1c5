package local

import (
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// Options configure Start.
type Options struct {
	// Masters is the number of masters. Default 5.
	Masters int
	// Persistence of the masters at start. Default NoPersistence.
	Persistence backend.Persistence
	// Binary is the redis-server binary. Default: $QUORUMLOCK_REDIS_SERVER,
	// else redis-server on PATH.
	Binary string
	// ClockShim is the path of the built clock shim (nemesis/clockshim); when
	// set, masters run with it preloaded and SetClockOffset works.
	ClockShim string
}

// Backend is a set of local redis-server masters.
type Backend struct {
	masters []*Master
	root    string
}

var _ backend.Backend = (*Backend)(nil)

// Start starts the masters. On error, whatever was started is stopped.
func Start(ctx context.Context, o Options) (*Backend, error) {
	if o.Masters == 0 {
		o.Masters = 5
	}
	if o.Masters < 1 {
		return nil, fmt.Errorf("local: %d masters: need at least 1", o.Masters)
	}
	bin, err := binary(o.Binary)
	if err != nil {
		return nil, err
	}
	root, err := os.MkdirTemp("", "jepsen-like-local-")
	if err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	b := &Backend{root: root}
	for i := range o.Masters {
		m, err := newMaster(ctx, i, bin, root, o)
		if err != nil {
			_ = b.Close()
			return nil, err
		}
		b.masters = append(b.masters, m)
	}
	return b, nil
}

func binary(b string) (string, error) {
	if b == "" {
		b = os.Getenv("QUORUMLOCK_REDIS_SERVER")
	}
	if b == "" {
		b = "redis-server"
	}
	path, err := exec.LookPath(b)
	if err != nil {
		return "", fmt.Errorf("local: redis-server not found (install Debian's redis-server, or set QUORUMLOCK_REDIS_SERVER): %w", err)
	}
	return path, nil
}

// Masters returns the masters in order.
func (b *Backend) Masters() []backend.Master {
	out := make([]backend.Master, len(b.masters))
	for i, m := range b.masters {
		out[i] = m
	}
	return out
}

// Heal resumes, starts (empty) and un-shifts every master.
func (b *Backend) Heal(ctx context.Context) error {
	var errs []error
	for _, m := range b.masters {
		errs = append(errs, m.heal(ctx))
	}
	return errors.Join(errs...)
}

// Close kills every process by PID and removes the temporary directories.
func (b *Backend) Close() error {
	for _, m := range b.masters {
		m.close()
	}
	return os.RemoveAll(b.root)
}

// Master is one local master: a redis-server process, and after a failover
// the replica that took its place.
type Master struct {
	name      string
	binary    string
	dir       string
	clockFile string
	env       []string

	mu      sync.Mutex
	cur     *process
	old     []*process // replaced by a failover
	replica *process
	// following: the replica was attached (AttachReplica) and still
	// follows the primary.
	following bool
}

var _ backend.Master = (*Master)(nil)

func newMaster(ctx context.Context, i int, bin, root string, o Options) (*Master, error) {
	m := &Master{name: "m" + strconv.Itoa(i), binary: bin, dir: filepath.Join(root, "m"+strconv.Itoa(i))}
	if err := os.MkdirAll(m.dir, 0o755); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if o.ClockShim != "" {
		m.clockFile = filepath.Join(m.dir, "clock-offset")
		if err := os.WriteFile(m.clockFile, []byte("0\n"), 0o644); err != nil {
			return nil, fmt.Errorf("local: %w", err)
		}
		m.env = []string{"LD_PRELOAD=" + o.ClockShim, "CLOCKSHIM_FILE=" + m.clockFile}
	}
	p := &process{binary: bin, dir: filepath.Join(m.dir, "primary"), env: m.env}
	if err := os.MkdirAll(p.dir, 0o755); err != nil {
		return nil, fmt.Errorf("local: %w", err)
	}
	if err := p.startFresh(ctx, o.Persistence); err != nil {
		return nil, fmt.Errorf("local: master %s: %w", m.name, err)
	}
	m.cur = p
	return m, nil
}

func (m *Master) current() *process {
	m.mu.Lock()
	defer m.mu.Unlock()
	return m.cur
}

// Name returns "m<i>".
func (m *Master) Name() string { return m.name }

// Addr is 127.0.0.1:port of the process now serving as this master.
func (m *Master) Addr() string { return m.current().addr() }

// Pause sends SIGSTOP.
func (m *Master) Pause(context.Context) error { return m.current().signal(syscall.SIGSTOP) }

// Resume sends SIGCONT.
func (m *Master) Resume(context.Context) error { return m.current().signal(syscall.SIGCONT) }

// Kill sends SIGKILL and waits for the exit. A replica that still follows
// the master is cut off first: it lags from then on, and the restarted
// master gets no replica (nor a new replication id with it).
func (m *Master) Kill(ctx context.Context) error {
	return errors.Join(m.cutReplica(ctx), m.current().kill())
}

// Start starts the master on its port with p (after Kill).
func (m *Master) Start(ctx context.Context, p backend.Persistence) error {
	cur := m.current()
	if cur.running() {
		return fmt.Errorf("local: master %s is running", m.name)
	}
	if p == backend.FromSnapshot {
		if _, err := os.Stat(filepath.Join(cur.dir, backend.SnapshotFile)); err != nil {
			return fmt.Errorf("local: master %s has no snapshot (call Snapshot first): %w", m.name, err)
		}
	}
	return cur.restart(ctx, p)
}

// Snapshot runs SAVE and keeps the RDB as backend.SnapshotFile in the
// process's directory, where Start(ctx, backend.FromSnapshot) loads it. The
// RDB keeps each key's absolute expiry time, so a key that expired since is
// gone after the rollback, as on any Redis restart.
func (m *Master) Snapshot(ctx context.Context) error {
	cur := m.current()
	c := redis.NewClient(&redis.Options{Addr: cur.addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	name, err := c.ConfigGet(ctx, "dbfilename").Result()
	if err != nil {
		return fmt.Errorf("local: snapshot %s: %w", m.name, err)
	}
	if err := c.Save(ctx).Err(); err != nil {
		return fmt.Errorf("local: snapshot %s: %w", m.name, err)
	}
	if file := name["dbfilename"]; file != backend.SnapshotFile {
		// set aside, so that a later start without persistence finds no RDB
		if err := os.Rename(filepath.Join(cur.dir, file), filepath.Join(cur.dir, backend.SnapshotFile)); err != nil {
			return fmt.Errorf("local: snapshot %s: %w", m.name, err)
		}
	}
	return nil
}

// Flush runs FLUSHALL.
func (m *Master) Flush(ctx context.Context) error {
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	if err := c.FlushAll(ctx).Err(); err != nil {
		return fmt.Errorf("local: flush %s: %w", m.name, err)
	}
	return nil
}

// DetachReplica starts a replica, waits until it synced, and detaches it;
// a replica AttachReplica started is only detached.
func (m *Master) DetachReplica(ctx context.Context) error {
	m.mu.Lock()
	if m.replica != nil {
		m.mu.Unlock()
		return m.cutReplica(ctx)
	}
	r := m.newReplica()
	m.replica = r
	m.mu.Unlock()
	if err := os.MkdirAll(r.dir, 0o755); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	if err := r.startFresh(ctx, backend.NoPersistence); err != nil {
		return fmt.Errorf("local: replica of %s: %w", m.name, err)
	}
	if err := backend.DetachWhenSynced(ctx, r.addr(), 20*time.Millisecond); err != nil {
		return fmt.Errorf("local: replica of %s: %w", m.name, err)
	}
	return nil
}

// Failover kills the master and puts its detached replica in its place.
func (m *Master) Failover(ctx context.Context) error {
	m.mu.Lock()
	r, old := m.replica, m.cur
	if r == nil {
		m.mu.Unlock()
		return fmt.Errorf("local: failover of %s: no detached replica (call DetachReplica first)", m.name)
	}
	m.cur, m.replica, m.old = r, nil, append(m.old, old)
	// Promoted: a later restart starts it as a master, not as a replica of
	// the dead primary (read-only, refusing every write).
	r.extra = nil
	m.mu.Unlock()
	return old.kill()
}

// SetClockOffset writes d (in ns) to the master's clock file, which the
// shim reads within 10 ms, and waits (up to 2 s) until the master's TIME
// shows it, so that the jump has happened when it returns.
func (m *Master) SetClockOffset(ctx context.Context, d time.Duration) error {
	if m.clockFile == "" {
		return fmt.Errorf("%w: master %s runs without the clock shim", backend.ErrUnsupported, m.name)
	}
	if err := backend.WriteClockOffset(m.clockFile, d); err != nil {
		return fmt.Errorf("local: master %s: %w", m.name, err)
	}
	if err := backend.WaitForClockOffset(ctx, m.Addr(), d); err != nil {
		return fmt.Errorf("local: master %s: %w", m.name, err)
	}
	return nil
}

func (m *Master) heal(ctx context.Context) error {
	var errs []error
	cur := m.current()
	switch {
	case !cur.running():
		errs = append(errs, cur.restart(ctx, backend.NoPersistence))
	case cur.isPaused():
		errs = append(errs, cur.signal(syscall.SIGCONT))
	}
	if m.clockFile != "" {
		errs = append(errs, m.SetClockOffset(ctx, 0))
	}
	return errors.Join(errs...)
}

func (m *Master) close() {
	m.mu.Lock()
	procs := append([]*process{m.cur, m.replica}, m.old...)
	m.mu.Unlock()
	for _, p := range procs {
		if p != nil {
			_ = p.kill()
		}
	}
}

// Disconnect is not supported on local masters: they share the host's
// loopback, which cannot be cut per master; the suite's in-process proxy
// cuts clients off instead (the partition fault).
func (m *Master) Disconnect(context.Context) error {
	return fmt.Errorf("%w: net-partition runs on the Docker backend only", backend.ErrUnsupported)
}

// Reconnect is not supported on local masters (see Disconnect).
func (m *Master) Reconnect(context.Context) error {
	return fmt.Errorf("%w: net-partition runs on the Docker backend only", backend.ErrUnsupported)
}
