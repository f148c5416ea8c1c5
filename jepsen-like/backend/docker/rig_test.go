package docker

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// startOne starts a backend of one master container with o (Masters is set
// to 1) under a context of at most within, and removes it when the test
// ends, failing the test if that fails. CI has Docker: a missing daemon
// fails the test, it never skips.
func startOne(t *testing.T, within time.Duration, o Options) (context.Context, *Backend, *Master) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), within)
	t.Cleanup(cancel)
	o.Masters = 1
	b, err := Start(ctx, o)
	if err != nil {
		t.Fatalf("the Docker backend needs a Docker daemon (CI has one): %v", err)
	}
	t.Cleanup(func() {
		if err := b.Close(); err != nil {
			t.Error(err)
		}
	})
	return ctx, b, b.Masters()[0].(*Master)
}

// dial is a go-redis client of addr that honours context deadlines and
// never retries (opts adjust it), closed when the test ends.
func dial(t *testing.T, addr string, opts ...func(*redis.Options)) *redis.Client {
	t.Helper()
	o := &redis.Options{Addr: addr, ContextTimeoutEnabled: true, MaxRetries: -1}
	for _, f := range opts {
		f(o)
	}
	c := redis.NewClient(o)
	t.Cleanup(func() { _ = c.Close() })
	return c
}
