package cluster

import (
	"bytes"
	"context"
	"errors"
	"log/slog"
	"net"
	"os"
	"os/exec"
	"strings"
	"testing"
)

// loggerChildEnv names the scenario a re-executed test binary runs: go-redis's
// logger is process-wide, and what reaches stderr is seen only from outside.
const loggerChildEnv = "CLUSTER_LOGGER_TEST_CHILD"

// TestLoggerChild is the child's side: Dial with WithPing against a dead
// master, printing what the library prints.
func TestLoggerChild(t *testing.T) {
	scenario := os.Getenv(loggerChildEnv)
	if scenario == "" {
		t.Skip("only run as a child of TestDialKeepsGoRedisOffStderr")
	}
	opts := []Option{WithPing()}
	switch scenario {
	case "default":
	case "logger":
		opts = append(opts, WithLogger(slog.New(slog.NewTextHandler(os.Stdout, &slog.HandlerOptions{Level: slog.LevelDebug}))))
	case "kept":
		KeepRedisLogger()
	default:
		t.Fatalf("unknown scenario %q", scenario)
	}
	if _, err := Dial(context.Background(), []string{"redis://" + os.Getenv("CLUSTER_LOGGER_TEST_ADDR")}, opts...); err == nil {
		t.Fatal("Dial with WithPing succeeded against a dead master")
	}
}

func TestDialKeepsGoRedisOffStderr(t *testing.T) {
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	addr := ln.Addr().String()
	_ = ln.Close() // nothing listens there now: connection refused
	run := func(scenario string) (stdout, stderr string) {
		cmd := exec.Command(os.Args[0], "-test.run=^TestLoggerChild$", "-test.count=1")
		cmd.Env = append(os.Environ(), loggerChildEnv+"="+scenario, "CLUSTER_LOGGER_TEST_ADDR="+addr)
		var out, errb bytes.Buffer
		cmd.Stdout, cmd.Stderr = &out, &errb
		if err := cmd.Run(); err != nil {
			t.Fatalf("child %s: %v\nstdout:\n%s\nstderr:\n%s", scenario, err, out.String(), errb.String())
		}
		return out.String(), errb.String()
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
