package freeport

import (
	"net"
	"os/exec"
	"path/filepath"
	"strconv"
	"testing"
	"time"
)

func TestLoopbackPortCanBeBound(t *testing.T) {
	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	if port <= 0 || port > 65535 {
		t.Fatalf("port %d", port)
	}
	l, err := net.Listen("tcp", net.JoinHostPort("127.0.0.1", strconv.Itoa(port)))
	if err != nil {
		t.Fatalf("the free port %d cannot be bound: %v", port, err)
	}
	_ = l.Close()
}

// A redis-server whose port another server holds is never ready by its own
// log, though a PING to the port is answered (by the other server); nor is
// a server whose log holds only an earlier start's line.
func TestRedisReadyIsTheServersOwnWord(t *testing.T) {
	bin, err := exec.LookPath("redis-server")
	if err != nil {
		t.Skip("no redis-server on PATH")
	}
	start := func(port int, dir string) (*exec.Cmd, RedisLog) {
		t.Helper()
		path := filepath.Join(dir, "redis.log")
		log := StartingRedisLog(path)
		cmd := exec.Command(bin, "--port", strconv.Itoa(port), "--bind", "127.0.0.1", "--save", "", "--dir", dir, "--logfile", path)
		if err := cmd.Start(); err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = cmd.Process.Kill() })
		return cmd, log
	}
	exitsWithin := func(cmd *exec.Cmd, d time.Duration) bool {
		done := make(chan struct{})
		go func() { _ = cmd.Wait(); close(done) }()
		select {
		case <-done:
			return true
		case <-time.After(d):
			return false
		}
	}
	port, err := Loopback()
	if err != nil {
		t.Fatal(err)
	}
	firstDir := t.TempDir()
	first, firstLog := start(port, firstDir)
	deadline := time.Now().Add(10 * time.Second)
	for !firstLog.Ready() {
		if time.Now().After(deadline) {
			t.Fatal("the first server never logged that it is ready")
		}
		time.Sleep(20 * time.Millisecond)
	}
	second, secondLog := start(port, t.TempDir())
	if !exitsWithin(second, 10*time.Second) {
		t.Fatal("the second server on a taken port did not exit")
	}
	if secondLog.Ready() {
		t.Fatal("the server that could not bind its port says it is ready")
	}
	// The first server's log, read from its end: an earlier start's line
	// does not count.
	if err := first.Process.Kill(); err != nil {
		t.Fatal(err)
	}
	exitsWithin(first, 10*time.Second)
	if again := StartingRedisLog(filepath.Join(firstDir, "redis.log")); again.Ready() {
		t.Fatal("a log read from its end says ready before any start")
	}
}
