package cluster

import (
	"context"
	"errors"
	"log/slog"
	"os"
	"strconv"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/internal/childtest"
	"github.com/quorumlock/quorumlock/internal/freeport"
)

// TestLoggerChild is the child's side of TestDialKeepsGoRedisOffStderr
// (go-redis's logger is process-wide, and what reaches stderr is seen only
// from outside): Dial with WithPing against a dead master.
func TestLoggerChild(t *testing.T) {
	opts := []Option{WithPing()}
	switch childtest.Scenario() {
	case "":
		t.Skip("only run as a child of TestDialKeepsGoRedisOffStderr")
	case "default":
	case "logger":
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	case "kept":
		KeepRedisLogger()
	default:
		t.Fatalf("unknown scenario %q", childtest.Scenario())
	}
	if _, err := Dial(context.Background(), []string{"redis://" + os.Getenv("CLUSTER_LOGGER_TEST_ADDR")}, opts...); err == nil {
		t.Fatal("Dial with WithPing succeeded against a dead master")
	}
}

func TestDialKeepsGoRedisOffStderr(t *testing.T) {
	port, err := freeport.Loopback() // nothing listens there: connection refused
	if err != nil {
		t.Fatal(err)
	}
	addr := "127.0.0.1:" + strconv.Itoa(port)
	run := func(scenario string) (stdout, stderr string) {
		return childtest.Run(t, "TestLoggerChild", scenario, "CLUSTER_LOGGER_TEST_ADDR="+addr)
	}
	const line = "failed to dial"
	if out, errOut := run("default"); strings.Contains(out+errOut, line) {
		t.Errorf("default: go-redis's line was printed:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	out, errOut := run("logger")
	if strings.Contains(errOut, line) || !strings.Contains(out, "msg=go-redis") || !strings.Contains(out, "master="+addr) || !strings.Contains(out, line) {
		t.Errorf("WithLogger: want the line in the logger, not on stderr:\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
	if _, errOut := run("kept"); !strings.Contains(errOut, "redis: ") || !strings.Contains(errOut, line) {
		t.Errorf("KeepRedisLogger: want go-redis's own line on stderr:\n%s", errOut)
	}
}

func TestWithLoggerRejectsNil(t *testing.T) {
	if _, err := Dial(context.Background(), []string{"redis://127.0.0.1:1"}, WithLogger(nil)); !errors.Is(err, ErrInvalidArgument) {
		t.Fatalf("WithLogger(nil): %v", err)
	}
}
