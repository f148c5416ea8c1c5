package redisproc

import (
	"context"
	"errors"
	"net"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/freeport"
)

func config(t *testing.T) Config {
	t.Helper()
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Fatalf("redis-server not on PATH (make deps installs it): %v", err)
	}
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	return Config{Binary: bin, Addr: net.JoinHostPort("127.0.0.1", strconv.Itoa(port)), Dir: t.TempDir(),
		Args: []string{"--port", strconv.Itoa(port), "--save", ""}}
}

// A started server answers; paused, it does not; resumed, it answers what
// it held; killed, it is gone and Kill again is harmless.
func TestStartSignalKill(t *testing.T) {
	c := config(t)
	p, err := Start(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	rc := redis.NewClient(&redis.Options{Addr: c.Addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer rc.Close()
	if err := rc.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("started server: %v", err)
	}
	if err := p.Signal(syscall.SIGSTOP); err != nil {
		t.Fatal(err)
	}
	ctx, cancel := context.WithTimeout(t.Context(), 200*time.Millisecond)
	err = rc.Ping(ctx).Err()
	cancel()
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("PING to a paused server: %v; want a timeout", err)
	}
	if err := p.Signal(syscall.SIGCONT); err != nil {
		t.Fatal(err)
	}
	if err := rc.Ping(t.Context()).Err(); err != nil {
		t.Fatalf("resumed server: %v", err)
	}
	p.Kill()
	if !p.Exited() {
		t.Fatal("killed, not exited")
	}
	p.Kill()
	if err := p.Signal(syscall.SIGCONT); err == nil {
		t.Fatal("signal to an exited server: no error")
	}
}

// A second server on the first's port is not started, though the port
// answers PING: it exits, and the error says why with its log's tail.
func TestStartOnATakenPortFails(t *testing.T) {
	c := config(t)
	p, err := Start(t.Context(), c)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(p.Kill)
	c2 := c
	c2.Dir = t.TempDir()
	if q, err := Start(t.Context(), c2); err == nil {
		q.Kill()
		t.Fatal("a second server on a taken port started")
	} else if !strings.Contains(err.Error(), "exited during start-up") || !strings.Contains(err.Error(), c.Addr) {
		t.Fatalf("error %q; want it to name %s and the exit", err, c.Addr)
	}
}
