package docker

import (
	"bufio"
	"context"
	"errors"
	"io"
	"net"
	"os"
	"os/exec"
	"strconv"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// A cut master's published port behaves as a host behind a DROP: a fresh
// go-redis PING and one on a connection made before the cut time out (they
// are neither refused nor answered) while the master runs on; a command
// written before the cut is held by TCP and executed after Reconnect; the
// data is intact and the address unchanged.
func TestNetworkCut(t *testing.T) {
	ctx, _, m := startOne(t, 2*time.Minute, Options{})
	addr := m.Addr()
	client := func() *redis.Client {
		return dial(t, addr, func(o *redis.Options) { o.DialTimeout, o.PoolSize = 500*time.Millisecond, 1 })
	}
	before := client()
	if err := before.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	raw, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	defer raw.Close()
	rd := bufio.NewReader(raw)

	if err := m.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Disconnect(ctx); err != nil {
		t.Fatalf("a second Disconnect: %v", err)
	}
	// In flight: written into the kernel, not delivered while cut.
	if _, err := raw.Write([]byte("SET late 1\r\n")); err != nil {
		t.Fatal(err)
	}
	for name, c := range map[string]*redis.Client{"fresh": client(), "pooled": before} {
		pctx, pcancel := context.WithTimeout(ctx, time.Second)
		start := time.Now()
		err := c.Ping(pctx).Err()
		pcancel()
		t.Logf("PING on a %s connection while cut: %v after %v", name, err, time.Since(start).Round(time.Millisecond))
		if err == nil {
			t.Fatalf("a cut master answered PING on a %s connection", name)
		}
		if errors.Is(err, syscall.ECONNREFUSED) || errors.Is(err, syscall.ECONNRESET) || errors.Is(err, io.EOF) {
			t.Fatalf("PING on a %s connection: %v; want a timeout, as behind a DROP", name, err)
		}
		var ne net.Error
		if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
			t.Fatalf("PING on a %s connection: %v; want a timeout", name, err)
		}
	}
	if err := raw.SetReadDeadline(time.Now().Add(300 * time.Millisecond)); err != nil {
		t.Fatal(err)
	}
	if line, err := rd.ReadString('\n'); !errors.Is(err, os.ErrDeadlineExceeded) {
		t.Fatalf("the SET written during the cut: %q, %v; want no reply yet", line, err)
	}
	// The master runs on (its loopback is not cut) and has not seen the SET.
	if got := execCLI(ctx, t, m, "GET", "late"); got != "" {
		t.Fatalf("GET late inside the cut container: %q; the SET was delivered during the cut", got)
	}

	if err := m.Reconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := m.Reconnect(ctx); err != nil {
		t.Fatalf("a second Reconnect: %v", err)
	}
	start := time.Now()
	if err := raw.SetReadDeadline(time.Now().Add(30 * time.Second)); err != nil {
		t.Fatal(err)
	}
	line, err := rd.ReadString('\n')
	t.Logf("the SET written during the cut answered %q %v after Reconnect", strings.TrimSpace(line), time.Since(start).Round(time.Millisecond))
	if err != nil || line != "+OK\r\n" {
		t.Fatalf("the SET written during the cut, after Reconnect: %q, %v; want +OK (delivered late by TCP)", line, err)
	}
	if m.Addr() != addr {
		t.Fatalf("the address moved from %s to %s", addr, m.Addr())
	}
	after := client()
	if got, err := after.MGet(ctx, "k", "late").Result(); err != nil || got[0] != "v" || got[1] != "1" {
		t.Fatalf("after Reconnect: %v, %v; want [v 1]", got, err)
	}
}

// A cut master is reconnected by Heal.
func TestHealReconnects(t *testing.T) {
	ctx, b, m := startOne(t, time.Minute, Options{})
	if err := m.Disconnect(ctx); err != nil {
		t.Fatal(err)
	}
	if err := b.Heal(ctx); err != nil {
		t.Fatal(err)
	}
	c := dial(t, m.Addr(), func(o *redis.Options) { o.DialTimeout = time.Second })
	pctx, pcancel := context.WithTimeout(ctx, 5*time.Second)
	defer pcancel()
	if err := c.Ping(pctx).Err(); err != nil {
		t.Fatalf("PING after Heal: %v", err)
	}
}

// execCLI runs the host's redis-cli in the master's network namespace,
// against its loopback (which no cut touches: the image has no redis-cli),
// and returns its output, trimmed.
func execCLI(ctx context.Context, t *testing.T, m *Master, args ...string) string {
	t.Helper()
	m.mu.Lock()
	c := m.ctr
	m.mu.Unlock()
	info, err := c.Inspect(ctx)
	if err != nil {
		t.Fatal(err)
	}
	argv := append([]string{"-t", strconv.Itoa(info.State.Pid), "-n", "redis-cli", "-h", "127.0.0.1", "-p", "6379"}, args...)
	out, err := exec.CommandContext(ctx, "nsenter", argv...).CombinedOutput()
	if err != nil {
		t.Fatalf("nsenter %v: %v: %s", argv, err, out)
	}
	return strings.TrimSpace(string(out))
}
