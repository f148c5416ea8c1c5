package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/freeport"
	"github.com/quorumlock/quorumlock/jepsen-like/backend"
)

// process is one redis-server on a fixed loopback port.
type process struct {
	binary string
	dir    string
	port   int
	env    []string // extra environment (LD_PRELOAD, the clock file)
	extra  []string // extra arguments

	mu     sync.Mutex
	cmd    *exec.Cmd
	exited chan struct{}
	paused bool
}

func (p *process) addr() string { return net.JoinHostPort("127.0.0.1", strconv.Itoa(p.port)) }

// startFresh picks a free port and starts; a port taken between probe and
// bind is tried again with another one.
func (p *process) startFresh(ctx context.Context, per backend.Persistence) error {
	var err error
	for range 5 {
		if p.port, err = freeport.Loopback(); err != nil {
			return err
		}
		if err = p.start(ctx, per); err == nil {
			return nil
		}
	}
	return err
}

// start launches the process on its port and waits until its log says it
// is ready and it answers PING.
func (p *process) start(ctx context.Context, per backend.Persistence) error {
	args := []string{
		"--port", strconv.Itoa(p.port), "--bind", "127.0.0.1", "--dir", p.dir,
		"--daemonize", "no", "--logfile", filepath.Join(p.dir, "redis.log"),
		"--repl-diskless-sync-delay", "0", // a replica syncs at once, not after 5 s
	}
	args = append(append(args, per.Args()...), p.extra...)
	cmd := exec.Command(p.binary, args...)
	cmd.Args[0] = "redis-server"
	cmd.Env = append(os.Environ(), p.env...)
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: syscall.SIGKILL}
	ownLog := freeport.StartingRedisLog(filepath.Join(p.dir, "redis.log"))
	if err := cmd.Start(); err != nil {
		return fmt.Errorf("local: start redis-server: %w", err)
	}
	exited := make(chan struct{})
	go func() { _ = cmd.Wait(); close(exited) }()
	p.mu.Lock()
	p.cmd, p.exited, p.paused = cmd, exited, false
	p.mu.Unlock()

	c := redis.NewClient(&redis.Options{Addr: p.addr(), MaxRetries: -1, DialTimeout: 200 * time.Millisecond})
	defer c.Close()
	deadline := time.Now().Add(10 * time.Second)
	for {
		select {
		case <-exited:
			log, _ := os.ReadFile(filepath.Join(p.dir, "redis.log"))
			if len(log) > 400 {
				log = log[len(log)-400:]
			}
			return fmt.Errorf("local: redis-server on %s exited during start-up: %s", p.addr(), log)
		default:
		}
		// Only this server's own log proves it holds the port: another
		// server that took the port first would answer the PING.
		err := errors.New("not ready by its log")
		if ownLog.Ready() {
			pctx, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
			err = c.Ping(pctx).Err()
			cancel()
			if err == nil {
				return nil
			}
		}
		if ctx.Err() != nil || time.Now().After(deadline) {
			_ = p.kill()
			return fmt.Errorf("local: redis-server on %s did not answer PING: %w", p.addr(), err)
		}
		time.Sleep(20 * time.Millisecond)
	}
}

// restart starts the process again on its port (which may linger briefly).
func (p *process) restart(ctx context.Context, per backend.Persistence) error {
	var err error
	for range 50 {
		if err = p.start(ctx, per); err == nil || ctx.Err() != nil {
			return err
		}
		time.Sleep(50 * time.Millisecond)
	}
	return err
}

func (p *process) signal(sig syscall.Signal) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.cmd == nil {
		return errors.New("local: redis-server is not running")
	}
	if err := syscall.Kill(p.cmd.Process.Pid, sig); err != nil {
		return fmt.Errorf("local: signal %v: %w", sig, err)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT:
		p.paused = false
	}
	return nil
}

// kill sends SIGKILL by PID and waits for the exit; a no-op when not running.
func (p *process) kill() error {
	p.mu.Lock()
	cmd, exited := p.cmd, p.exited
	p.cmd, p.paused = nil, false
	p.mu.Unlock()
	if cmd == nil {
		return nil
	}
	_ = syscall.Kill(cmd.Process.Pid, syscall.SIGKILL)
	<-exited
	return nil
}

func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.cmd != nil
}

func (p *process) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}
