package clustertest

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/freeport"
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
	cmd         *exec.Cmd
	exited      chan struct{}
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

// errNotReady is start's error while the server's log does not yet say it
// accepts connections.
var errNotReady = errors.New("not ready by its log")

// start launches the process and waits until its log says it is ready and
// it answers PING.
func (s *Server) start() error {
	args := s.opts.listenArgs(strconv.Itoa(s.Port))
	args = append(args, "--bind", "127.0.0.1",
		"--dir", s.Dir, "--save", "", "--daemonize", "no",
		"--logfile", filepath.Join(s.Dir, "redis.log"),
	)
	args = append(args, s.persistence.args()...)
	args = append(args, s.opts.args...)
	cmd := exec.Command(s.binary, args...)
	cmd.Args[0] = "redis-server" // Redis picks its mode from argv[0]
	// If the test binary dies without running its cleanups (a -timeout panic,
	// a kill), the kernel kills the server too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ownLog := freeport.StartingRedisLog(filepath.Join(s.Dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return err
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	s.mu.Lock()
	s.cmd, s.exited, s.paused = cmd, exited, false
	s.mu.Unlock()

	c := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond,
		TLSConfig: s.TLSConfig()})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(s.Dir, "redis.log"))
			return fmt.Errorf("redis-server on %s exited during start-up: %s", s.Addr, tail(log, 400))
		default:
		}
		// Only this server's own log proves it holds the port: another
		// server that took the port first would answer the PING.
		err := errNotReady
		if ownLog.Ready() {
			ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
			err = c.Ping(ctx).Err()
			cancel()
		}
		var reply redis.Error
		if err == nil || errors.As(err, &reply) && !strings.HasPrefix(err.Error(), "LOADING") {
			// An error reply (NOAUTH when the default user needs a
			// password) is the server answering.
			return nil
		}
		if time.Now().After(deadline) {
			s.Stop()
			return fmt.Errorf("redis-server on %s did not answer PING within 10s: %w", s.Addr, err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

func tail(b []byte, n int) string {
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}

func (s *Server) signal(sig syscall.Signal) error {
	s.mu.Lock()
	defer s.mu.Unlock()
	if s.cmd == nil || s.cmd.Process == nil {
		return errors.New("clustertest: server is not running")
	}
	return syscall.Kill(s.cmd.Process.Pid, sig)
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
	cmd, exited := s.cmd, s.exited
	s.mu.Unlock()
	if cmd == nil {
		return errors.New("clustertest: server is not running")
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	s.mu.Lock()
	s.cmd = nil
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
	if s.cmd == nil {
		return false
	}
	select {
	case <-s.exited:
		return false
	default:
		return true
	}
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
	if s.cmd == nil || s.cmd.Process == nil {
		return 0
	}
	return s.cmd.Process.Pid
}
