package redlock

import (
	"context"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/childtest"
	"github.com/quorumlock/quorumlock/internal/freeport"
)

// TestGoRedisLogChild is the child's side of TestNewKeepsGoRedisOffStderr:
// a Client over a dead master (and two live-looking dead ones) locks and
// fails, several times, with or without a logger.
func TestGoRedisLogChild(t *testing.T) {
	var opts []Option
	switch childtest.Scenario() {
	case "":
		t.Skip("only run as a child of TestNewKeepsGoRedisOffStderr")
	case "default":
	case "logger":
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	default:
		t.Fatalf("unknown scenario %q", childtest.Scenario())
	}
	addr := os.Getenv("REDLOCK_LOGGER_TEST_ADDR")
	var masters []redis.UniversalClient
	for range 3 {
		rc := redis.NewClient(&redis.Options{Addr: addr, DialTimeout: 200 * time.Millisecond})
		defer rc.Close()
		masters = append(masters, rc)
	}
	c, err := New(masters, append(opts, WithoutQuarantine())...)
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for range 3 {
		if _, err := c.TryLock(context.Background(), "k", time.Second); err == nil {
			t.Fatal("locked on dead masters")
		}
	}
	// go-redis's pool keeps dialing in the background (five attempts with
	// backoff, about a second) and logs when it gives up.
	time.Sleep(2 * time.Second)
}

// A library user's stderr never shows go-redis's "failed to dial" lines for
// the masters given to New; with WithLogger they reach that logger.
func TestNewKeepsGoRedisOffStderr(t *testing.T) {
	port, err := freeport.Loopback() // nothing listens there: connection refused
	if err != nil {
		t.Fatal(err)
	}
	env := "REDLOCK_LOGGER_TEST_ADDR=127.0.0.1:" + strconv.Itoa(port)
	const line = "failed to dial"
	if out, errOut := childtest.Run(t, "TestGoRedisLogChild", "default", env); strings.Contains(out+errOut, line) {
		t.Errorf("default: go-redis's line was printed:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	out, errOut := childtest.Run(t, "TestGoRedisLogChild", "logger", env)
	if strings.Contains(errOut, line) || !strings.Contains(out, "msg=go-redis") || !strings.Contains(out, line) {
		t.Errorf("WithLogger: want the line in the logger, not on stderr:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
