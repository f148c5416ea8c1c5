package redislog

import (
	"bytes"
	"context"
	"encoding/json"
	"errors"
	"log/slog"
	"net"
	"os"
	"strconv"
	"strings"
	"syscall"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/childtest"
	"github.com/quorumlock/quorumlock/internal/freeport"
)

// deadAddr is a loopback address nothing listens on (connection refused).
func deadAddr(t testing.TB) string {
	port, err := freeport.Loopback()
	if err != nil {
		t.Fatal(err)
	}
	return "127.0.0.1:" + strconv.Itoa(port)
}

func client(addr string, hooks ...redis.Hook) *redis.Client {
	rc := redis.NewClient(&redis.Options{Addr: addr, DialerRetries: 1, MaxRetries: -1})
	for _, h := range hooks {
		rc.AddHook(h)
	}
	return rc
}

// TestChild is the child process's side: it runs one scenario, printing
// whatever the library prints, to the process's real stderr and stdout.
func TestChild(t *testing.T) {
	scenario := childtest.Scenario()
	if scenario == "" {
		t.Skip("only run as a child of TestRouting")
	}
	addr := os.Getenv("REDISLOG_TEST_ADDR")
	jsonOut := slog.New(slog.NewJSONHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))
	var rc *redis.Client
	switch scenario {
	case "routed":
		Install()
		rc = client(addr, NewHook(jsonOut))
	case "dropped":
		Install()
		rc = client(addr, NewHook(nil))
	case "two-hooks":
		Install()
		rc = client(addr, NewHook(nil), NewHook(jsonOut))
	case "other-client":
		Install()
		rc = client(addr)
	case "kept":
		Keep()
		if Install() {
			t.Fatal("Install after Keep installed the router")
		}
		rc = client(addr, NewHook(jsonOut))
	default:
		t.Fatalf("unknown scenario %q", scenario)
	}
	defer rc.Close()
	if err := rc.Ping(context.Background()).Err(); err == nil {
		t.Fatal("PING to a dead address succeeded")
	}
}

// run runs one scenario of TestChild in a child process.
func run(t *testing.T, scenario, addr string) (stdout, stderr string) {
	t.Helper()
	return childtest.Run(t, "TestChild", scenario, "REDISLOG_TEST_ADDR="+addr)
}

// goRedisLine is what go-redis prints for a failed dial.
const goRedisLine = "connection pool: failed to dial"

func TestRouting(t *testing.T) {
	addr := deadAddr(t)
	t.Run("a hooked client's failed dial goes to its logger, not to stderr", func(t *testing.T) {
		out, errOut := run(t, "routed", addr)
		if strings.Contains(errOut, goRedisLine) {
			t.Fatalf("go-redis's line reached stderr:\n%s", errOut)
		}
		var rec map[string]any
		for l := range strings.Lines(out) {
			if strings.HasPrefix(l, "{") {
				if err := json.Unmarshal([]byte(l), &rec); err != nil {
					t.Fatal(err)
				}
			}
		}
		if rec["msg"] != Message || rec["level"] != "DEBUG" || rec["master"] != addr || !strings.Contains(rec["line"].(string), goRedisLine) {
			t.Fatalf("logger got %v; want the failed dial of %s at DEBUG\nstdout:\n%s", rec, addr, out)
		}
	})
	t.Run("a hook without a logger drops the line", func(t *testing.T) {
		out, errOut := run(t, "dropped", addr)
		if strings.Contains(errOut+out, goRedisLine) {
			t.Fatalf("the line was printed:\nstdout:\n%s\nstderr:\n%s", out, errOut)
		}
	})
	t.Run("two hooks on one client: the line reaches the one with a logger", func(t *testing.T) {
		out, errOut := run(t, "two-hooks", addr)
		if strings.Contains(errOut, goRedisLine) || strings.Count(out, goRedisLine) != 1 {
			t.Fatalf("want the line once on stdout, never on stderr:\nstdout:\n%s\nstderr:\n%s", out, errOut)
		}
	})
	t.Run("another go-redis client of the program logs to stderr as before", func(t *testing.T) {
		_, errOut := run(t, "other-client", addr)
		if !strings.Contains(errOut, "redis: ") || !strings.Contains(errOut, "pool.go:") || !strings.Contains(errOut, goRedisLine) {
			t.Fatalf("stderr:\n%s\nwant go-redis's own line, with its prefix and file:line", errOut)
		}
	})
	t.Run("Keep leaves go-redis's logger alone", func(t *testing.T) {
		out, errOut := run(t, "kept", addr)
		if !strings.Contains(errOut, goRedisLine) || strings.Contains(out, goRedisLine) {
			t.Fatalf("after Keep: want go-redis's default logger on stderr:\nstdout:\n%s\nstderr:\n%s", out, errOut)
		}
	})
}

// The hook's errors read and match as go-redis's own.
func TestHookedErrorsAreTransparent(t *testing.T) {
	addr := deadAddr(t)
	plain, hooked := client(addr), client(addr, NewHook(nil))
	defer plain.Close()
	defer hooked.Close()
	ctx := context.Background()
	want, got := plain.Ping(ctx).Err(), hooked.Ping(ctx).Err()
	if got == nil || want == nil || got.Error() != want.Error() {
		t.Fatalf("hooked error %q, go-redis's %q", got, want)
	}
	var op *net.OpError
	if !errors.Is(got, syscall.ECONNREFUSED) || !errors.As(got, &op) || op.Op != "dial" {
		t.Fatalf("hooked error %v does not match ECONNREFUSED / *net.OpError", got)
	}
}

// ctxProbe is a hook that records whether the context of a command or
// pipeline carries a route.
type ctxProbe struct{ cmd, pipe bool }

func (p *ctxProbe) DialHook(next redis.DialHook) redis.DialHook { return next }
func (p *ctxProbe) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		p.cmd = len(ctxRoutes(ctx)) == 1
		return next(ctx, cmd)
	}
}
func (p *ctxProbe) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		p.pipe = len(ctxRoutes(ctx)) == 1
		return next(ctx, cmds)
	}
}

// Lines go-redis logs with a command's context (a pool or push notice) are
// routed by that context: the hook marks it.
func TestContextRouting(t *testing.T) {
	var buf bytes.Buffer
	l := slog.New(slog.NewTextHandler(&buf, &slog.HandlerOptions{Level: slog.LevelDebug}))
	probe := &ctxProbe{}
	rc := client(deadAddr(t), NewHook(l), probe)
	defer rc.Close()
	ctx := context.Background()
	_ = rc.Ping(ctx).Err()
	_, _ = rc.Pipelined(ctx, func(p redis.Pipeliner) error { p.Ping(ctx); return nil })
	if !probe.cmd || !probe.pipe {
		t.Fatalf("route in the command's context %v, the pipeline's %v; want both", probe.cmd, probe.pipe)
	}
	r := NewRouter()
	r.Printf(withRoute(ctx, &route{logger: l}), "push: error processing pending notifications: %v", errors.New("boom"))
	if !strings.Contains(buf.String(), "push: error processing pending notifications: boom") {
		t.Fatalf("a line logged with a routed context did not reach the logger: %q", buf.String())
	}
}
