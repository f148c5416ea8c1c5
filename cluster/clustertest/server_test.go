package clustertest

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

func TestPauseResumeRestart(t *testing.T) {
	ctx := context.Background()
	s := StartServer(t, NoPersistence)
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Pause(); err != nil {
		t.Fatal(err)
	}
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err := c.Ping(short).Err()
	cancel()
	if err == nil {
		t.Fatal("PING answered by a paused server")
	}
	if err := s.Resume(); err != nil {
		t.Fatal(err)
	}
	if got := c.Get(ctx, "k").Val(); got != "v" {
		t.Fatalf("after resume GET k = %q, want v", got)
	}
	if err := s.Restart(NoPersistence); err != nil {
		t.Fatal(err)
	}
	if err := c.Get(ctx, "k").Err(); err != redis.Nil {
		t.Fatalf("restart without persistence kept data: err=%v", err)
	}
}

func TestRestartWithAOFKeepsData(t *testing.T) {
	ctx := context.Background()
	s := StartServer(t, AOFAlways)
	c := s.Client(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if err := s.Restart(AOFAlways); err != nil {
		t.Fatal(err)
	}
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after AOF restart GET k = %q, %v; want v", got, err)
	}
	if err := s.Kill(); err != nil {
		t.Fatal(err)
	}
	if s.Running() {
		t.Fatal("Running after Kill")
	}
}

func TestPIDIsTheServersProcess(t *testing.T) {
	ctx := context.Background()
	s := StartServer(t, NoPersistence)
	info, err := s.Client(t).Info(ctx, "server").Result()
	if err != nil {
		t.Fatal(err)
	}
	want := fmt.Sprintf("process_id:%d\r\n", s.PID())
	if s.PID() == 0 || !strings.Contains(info, want) {
		t.Fatalf("PID() = %d; INFO server does not say %q", s.PID(), want)
	}
	s.Stop()
	if s.PID() != 0 {
		t.Fatalf("PID() = %d after Stop, want 0", s.PID())
	}
}
