package redisproc

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"path/filepath"
	"strings"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/freeport"
)

// ReadyTimeout is how long Start waits for a server to be ready.
const ReadyTimeout = 10 * time.Second

// Config is how to start one redis-server.
type Config struct {
	Binary string // path of the redis-server binary
	Addr   string // "127.0.0.1:port" it will listen on, for the readiness PING
	Dir    string // working directory; the log is Dir/redis.log
	// Args are the listening ports (--port, or --tls-port and its files),
	// persistence and the rest; Start adds --bind 127.0.0.1, --dir,
	// --daemonize no and --logfile.
	Args []string
	Env  []string    // added to the program's environment
	TLS  *tls.Config // for the readiness PING of a TLS port; nil otherwise
}

// LogPath is the server's log file.
func (c Config) LogPath() string { return filepath.Join(c.Dir, "redis.log") }

// Proc is one running redis-server process.
type Proc struct {
	cmd    *exec.Cmd
	exited chan struct{}
}

// errNotReady is the readiness error while the server's log does not yet say
// it accepts connections.
var errNotReady = errors.New("not ready by its log")

// Start launches redis-server and waits until its own log says it is ready
// and it answers PING (an error reply other than LOADING, such as NOAUTH,
// is an answer), up to ReadyTimeout or ctx's end. On failure the process is
// killed and the error names the address, with the log's tail when the
// server exited (a port taken by another process: "Address already in use").
func Start(ctx context.Context, c Config) (*Proc, error) {
	args := append(append([]string(nil), c.Args...),
		"--bind", "127.0.0.1", "--dir", c.Dir, "--daemonize", "no", "--logfile", c.LogPath())
	cmd := exec.Command(c.Binary, args...)
	cmd.Args[0] = "redis-server" // Redis picks its mode from argv[0]
	cmd.Env = append(os.Environ(), c.Env...)
	// If the program dies without running its cleanups (a -timeout panic,
	// a kill), the kernel kills the server too.
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ownLog := freeport.StartingRedisLog(c.LogPath())
	if err := cmd.Start(); err != nil {
		return nil, fmt.Errorf("start redis-server: %w", err)
	}
	p := &Proc{cmd: cmd, exited: make(chan struct{})}
	go func() { _ = cmd.Wait(); close(p.exited) }()
	if err := p.awaitReady(ctx, c, ownLog); err != nil {
		p.Kill()
		return nil, err
	}
	return p, nil
}

func (p *Proc) awaitReady(ctx context.Context, c Config, ownLog freeport.RedisLog) error {
	rc := redis.NewClient(&redis.Options{Addr: c.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, TLSConfig: c.TLS})
	defer rc.Close()
	deadline := time.Now().Add(ReadyTimeout)
	for {
		select {
		case <-p.exited:
			log, _ := os.ReadFile(c.LogPath())
			return fmt.Errorf("redis-server on %s exited during start-up: %s", c.Addr, tail(log, 400))
		default:
		}
		// Only this server's own log proves it holds the port: another
		// server that took the port first would answer the PING.
		err := errNotReady
		if ownLog.Ready() {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err = rc.Ping(pctx).Err()
			cancel()
		}
		var reply redis.Error
		if err == nil || errors.As(err, &reply) && !strings.HasPrefix(err.Error(), "LOADING") {
			return nil
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			return fmt.Errorf("redis-server on %s did not answer PING within %v: %w", c.Addr, ReadyTimeout, err)
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

// PID is the process id.
func (p *Proc) PID() int { return p.cmd.Process.Pid }

// Signal sends sig to the process (SIGSTOP pauses it: its sockets keep
// accepting bytes, and what they hold runs on SIGCONT). os.Process signals
// through a pidfd: an exited process's id, reused by another, is never hit.
func (p *Proc) Signal(sig syscall.Signal) error {
	if err := p.cmd.Process.Signal(sig); err != nil {
		return fmt.Errorf("signal %v to redis-server %d: %w", sig, p.PID(), err)
	}
	return nil
}

// Kill sends SIGKILL and waits until the process exited. Safe to call
// again.
func (p *Proc) Kill() {
	_ = p.cmd.Process.Kill()
	<-p.exited
}

// Exited reports whether the process has exited.
func (p *Proc) Exited() bool {
	select {
	case <-p.exited:
		return true
	default:
		return false
	}
}
