package redisstore_test

import (
	"context"
	"errors"
	"fmt"
	"sync/atomic"
	"testing"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencingtest"
	"github.com/quorumlock/quorumlock/fencing/redisstore"
)

func isStale(err error) bool { return errors.Is(err, fencing.ErrStaleToken) }

func newMiniredis(t *testing.T) (*miniredis.Miniredis, *redis.Client) {
	t.Helper()
	m := miniredis.RunT(t)
	c := redis.NewClient(&redis.Options{Addr: m.Addr()})
	t.Cleanup(func() { _ = c.Close() })
	return m, c
}

// TestConformanceMiniredis runs the suite against miniredis, which runs the
// same Lua scripts in process: fast, but no substitute for the real server.
func TestConformanceMiniredis(t *testing.T) {
	_, client := newMiniredis(t)
	var n atomic.Int64
	fencingtest.RunStoreConformance(t, func(t *testing.T) fencing.Store {
		return redisstore.New(client, redisstore.WithPrefix(fmt.Sprintf("test%d:", n.Add(1))))
	})
}

// TestKeyLayout pins the documented layout: one hash per resource at
// prefix+resource with fields highest, holder and value.
func TestKeyLayout(t *testing.T) {
	ctx := context.Background()
	m, client := newMiniredis(t)

	def := redisstore.New(client)
	if got := def.Key("doc"); got != "quorumlock:fenced:doc" {
		t.Fatalf("default Key(doc) = %q", got)
	}
	if _, err := def.Read(ctx, "doc", 3, "a"); !errors.Is(err, fencing.ErrNotFound) {
		t.Fatalf("Read of empty resource = %v, want ErrNotFound", err)
	}
	if got, err := m.HKeys("quorumlock:fenced:doc"); err != nil || fmt.Sprint(got) != "[highest holder]" {
		t.Fatalf("fields after a read = %v, %v; want [highest holder]", got, err)
	}
	if err := def.Write(ctx, "doc", 5, "b", []byte("v\x00w")); err != nil {
		t.Fatal(err)
	}
	for field, want := range map[string]string{"highest": "5", "holder": "b", "value": "v\x00w"} {
		if got := m.HGet("quorumlock:fenced:doc", field); got != want {
			t.Errorf("HGET %s = %q, want %q", field, got, want)
		}
	}

	custom := redisstore.New(client, redisstore.WithPrefix("app:{fence}:"))
	if err := custom.Write(ctx, "doc", 1, "c", []byte("x")); err != nil {
		t.Fatalf("Write under another prefix: %v", err)
	}
	if !m.Exists("app:{fence}:doc") {
		t.Fatalf("keys = %v, want app:{fence}:doc among them", m.Keys())
	}
	if h, _ := def.Highest(ctx, "doc"); h != 5 {
		t.Fatalf("prefixes are not independent: default Highest(doc) = %d, want 5", h)
	}
}

func TestCorruptHighest(t *testing.T) {
	m, client := newMiniredis(t)
	m.HSet("quorumlock:fenced:doc", "highest", "not a number")
	if _, err := redisstore.New(client).Highest(context.Background(), "doc"); err == nil {
		t.Fatal("Highest of a corrupt hash succeeded")
	}
}

func TestWrongTypeKey(t *testing.T) {
	m, client := newMiniredis(t)
	if err := m.Set("quorumlock:fenced:doc", "a string"); err != nil {
		t.Fatal(err)
	}
	err := redisstore.New(client).Write(context.Background(), "doc", 1, "a", []byte("v"))
	if err == nil || isStale(err) {
		t.Fatalf("Write over a string key = %v, want a Redis error", err)
	}
}
