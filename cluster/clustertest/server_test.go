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

func TestServerOptionsSurviveRestart(t *testing.T) {
	ctx := context.Background()
	certs := NewCerts(t)
	s := StartServer(t, NoPersistence, WithTLS(certs, true), WithArgs("--busy-reply-threshold", "77"))
	if s.URL() != "rediss://"+s.Addr || s.TLSConfig() == nil {
		t.Fatalf("URL %s, TLS config %v: want rediss:// and a client config", s.URL(), s.TLSConfig())
	}
	for round := range 2 {
		c := s.Client(t)
		v, err := c.ConfigGet(ctx, "busy-reply-threshold").Result()
		if err != nil || v["busy-reply-threshold"] != "77" {
			t.Fatalf("round %d: busy-reply-threshold %v %v; want 77 from WithArgs", round, v, err)
		}
		plain := redis.NewClient(&redis.Options{Addr: s.Addr, MaxRetries: -1, DialTimeout: 200 * time.Millisecond, ReadTimeout: 200 * time.Millisecond})
		if err := plain.Ping(ctx).Err(); err == nil {
			t.Fatalf("round %d: a plain TCP client was answered by a TLS-only server", round)
		}
		_ = plain.Close()
		if err := s.Restart(NoPersistence); err != nil {
			t.Fatal(err)
		}
	}
}
