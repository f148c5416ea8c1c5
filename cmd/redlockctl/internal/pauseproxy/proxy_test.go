package pauseproxy

import (
	"context"
	"testing"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
)

func TestPauseHoldsTrafficAndResumeDeliversIt(t *testing.T) {
	m := miniredis.RunT(t)
	p, err := Start(m.Addr())
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1})
	defer c.Close()
	ctx := context.Background()
	if err := c.Set(ctx, "a", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p.Pause()
	short, cancel := context.WithTimeout(ctx, 100*time.Millisecond)
	err = c.Set(short, "b", "2", 0).Err()
	cancel()
	if err == nil {
		t.Fatal("SET answered through a paused proxy")
	}
	if m.Exists("b") {
		t.Fatal("SET reached the server while paused")
	}
	p.Resume()
	deadline := time.Now().Add(5 * time.Second)
	for !m.Exists("b") { // the held-back SET is delivered on resume, like SIGCONT
		if time.Now().After(deadline) {
			t.Fatal("held-back SET never delivered after Resume")
		}
		time.Sleep(10 * time.Millisecond)
	}
}
