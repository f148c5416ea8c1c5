package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"strconv"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/freeport"
	"github.com/quorumlock/quorumlock/internal/redisproc"
)

// Persistence selects how a server keeps its data across a restart.
type Persistence int

const (
	// NoPersistence: no RDB snapshots, no AOF. A restarted server is empty.
	NoPersistence Persistence = iota
	// AOFAlways: appendonly yes, appendfsync always. Nothing acknowledged is lost.
	AOFAlways
	// AOFEverySec: appendonly yes, appendfsync everysec.
	AOFEverySec
)

func (p Persistence) args() []string {
	switch p {
	case AOFAlways:
		return []string{"--appendonly", "yes", "--appendfsync", "always"}
	case AOFEverySec:
		return []string{"--appendonly", "yes", "--appendfsync", "everysec"}
	default:
		return []string{"--appendonly", "no"}
	}
}

// Server is one redis-server process on 127.0.0.1.
type Server struct {
	Addr string // "127.0.0.1:port"
	Port int
	Dir  string // working directory (AOF and logs)

	binary string

	mu          sync.Mutex
	proc        *redisproc.Proc // nil when not running
	persistence Persistence
	paused      bool
	opts        serverOptions
}

// URL returns the server's redis:// URL (rediss:// when started WithTLS).
func (s *Server) URL() string {
	if s.opts.certs != nil {
		return "rediss://" + s.Addr
	}
	return "redis://" + s.Addr
}

// StartServer starts one redis-server with the given persistence (and
// options: WithTLS, WithArgs) and stops it when the test ends.
func StartServer(t testing.TB, p Persistence, opts ...ServerOption) *Server {
	t.Helper()
	s, err := LaunchServer(p, opts...)
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	t.Cleanup(s.Close)
	return s
}

// LaunchServer starts one redis-server outside a test (for Example functions and
// commands); the caller must Close it.
func LaunchServer(p Persistence, opts ...ServerOption) (*Server, error) {
	var o serverOptions
	for _, f := range opts {
		f(&o)
	}
	bin, err := binary()
	if err != nil {
		return nil, err
	}
	dir, err := os.MkdirTemp("", "quorumlock-clustertest-")
	if err != nil {
		return nil, err
	}
	s := &Server{Dir: dir, binary: bin, persistence: p, opts: o}
	var lastErr error
	for range 5 { // a free port can be taken between probe and bind: try again
		port, err := freeport.Loopback()
		if err != nil {
			s.Close()
			return nil, err
		}
		s.Port, s.Addr = port, net.JoinHostPort("127.0.0.1", strconv.Itoa(port))
		if lastErr = s.start(); lastErr == nil {
			return s, nil
		}
	}
	s.Close()
	return nil, fmt.Errorf("start redis-server: %w", lastErr)
}

// Close stops the process and removes its directory.
func (s *Server) Close() {
	s.Stop()
	_ = os.RemoveAll(s.Dir)
}

func binary() (string, error) {
	if b := os.Getenv("QUORUMLOCK_REDIS_SERVER"); b != "" {
		return b, nil
	}
	b, err := exec.LookPath("redis-server")
	if err != nil {
		return "", fmt.Errorf("redis-server not found on PATH (install Debian's redis-server, or run `make test`): %w", err)
	}
	return b, nil
}

// start launches the process and waits until its own log says it is ready
// and it answers PING (redisproc.Start).
func (s *Server) start() error {
	args := append(s.opts.listenArgs(strconv.Itoa(s.Port)), "--save", "")
	args = append(args, s.persistence.args()...)
	args = append(args, s.opts.args...)
	p, err := redisproc.Start(context.Background(), redisproc.Config{
		Binary: s.binary, Addr: s.Addr, Dir: s.Dir, Args: args, TLS: s.TLSConfig()})
	if err != nil {
		return err
	}
	s.mu.Lock()
	s.proc, s.paused = p, false
	s.mu.Unlock()
	return nil
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return errors.New("clustertest: server is not running")
	}
	return s.proc.Signal(sig)
}

// Pause stops the process with SIGSTOP. Its socket keeps accepting bytes;
// queued commands run on Resume.
func (s *Server) Pause() error {
	if err := s.signal(syscall.SIGSTOP); err != nil {
		return err
	}
	s.mu.Lock()
	s.paused = true
	s.mu.Unlock()
	return nil
}

// Resume continues a paused process with SIGCONT.
func (s *Server) Resume() error {
	if err := s.signal(syscall.SIGCONT); err != nil {
		return err
	}
	s.mu.Lock()
	s.paused = false
	s.mu.Unlock()
	return nil
}

// Kill ends the process with SIGKILL and waits for it to exit.
func (s *Server) Kill() error {
	s.mu.Lock()
	p := s.proc
	s.mu.Unlock()
	if p == nil {
		return errors.New("clustertest: server is not running")
	}
	p.Kill()
	s.mu.Lock()
	s.proc = nil
	s.mu.Unlock()
	return nil
}

// Restart kills the process (if running) and starts it again on the same
// port with persistence p. With NoPersistence it comes back empty.
func (s *Server) Restart(p Persistence) error {
	if s.Running() {
		if err := s.Kill(); err != nil {
			return err
		}
	}
	s.mu.Lock()
	s.persistence = p
	s.mu.Unlock()
	var err error
	for range 50 { // the port may linger for a moment after SIGKILL
		if err = s.start(); err == nil {
			return nil
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

// Running reports whether the process is alive (paused counts as alive).
func (s *Server) Running() bool {
	s.mu.Lock()
	defer s.mu.Unlock()
	return s.proc != nil && !s.proc.Exited()
}

// Stop kills the process if it is running. It is safe to call twice.
func (s *Server) Stop() {
	if !s.Running() {
		return
	}
	_ = s.Kill()
}

// Client returns a go-redis client for this server, closed when the test ends.
// With no options it uses fail-fast settings (ContextTimeoutEnabled, short
// timeouts); pass opts to override.
func (s *Server) Client(t testing.TB, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{
		Addr: s.Addr, ContextTimeoutEnabled: true,
		DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		TLSConfig: s.TLSConfig(),
	}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}

// PID returns the process id of the running redis-server (paused counts as
// running), or 0 when it is not running. Benchmarks read its CPU time from
// /proc/<pid>/stat.
func (s *Server) PID() int {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.proc == nil {
		return 0
	}
	return s.proc.PID()
}
