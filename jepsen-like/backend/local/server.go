package local

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strconv"
	"sync"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/internal/freeport"
	"github.com/quorumlock/quorumlock/internal/redisproc"
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
	proc   *redisproc.Proc // nil when not running
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

// start launches the process on its port and waits until its own log says
// it is ready and it answers PING (redisproc.Start).
func (p *process) start(ctx context.Context, per backend.Persistence) error {
	args := []string{"--port", strconv.Itoa(p.port),
		"--repl-diskless-sync-delay", "0", // a replica syncs at once, not after 5 s
	}
	args = append(append(args, per.Args()...), p.extra...)
	proc, err := redisproc.Start(ctx, redisproc.Config{Binary: p.binary, Addr: p.addr(), Dir: p.dir, Args: args, Env: p.env})
	if err != nil {
		return fmt.Errorf("local: %w", err)
	}
	p.mu.Lock()
	p.proc, p.paused = proc, false
	p.mu.Unlock()
	return nil
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
	if p.proc == nil {
		return errors.New("local: redis-server is not running")
	}
	if err := p.proc.Signal(sig); err != nil {
		return fmt.Errorf("local: %w", err)
	}
	switch sig {
	case syscall.SIGSTOP:
		p.paused = true
	case syscall.SIGCONT:
		p.paused = false
	}
	return nil
}

// kill sends SIGKILL and waits for the exit; a no-op when not running.
func (p *process) kill() error {
	p.mu.Lock()
	proc := p.proc
	p.proc, p.paused = nil, false
	p.mu.Unlock()
	if proc != nil {
		proc.Kill()
	}
	return nil
}

func (p *process) running() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.proc != nil
}

func (p *process) isPaused() bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.paused
}
