package redislog

import (
	"testing"

	"github.com/redis/go-redis/v9"
)

// Route hooks a client once, however many times it is called on it: a
// hook per redlock Client built on the same go-redis clients would pile up.
func TestRouteHooksAClientOnce(t *testing.T) {
	Keep() // this test process keeps go-redis's logger
	c := redis.NewClient(&redis.Options{Addr: "127.0.0.1:1"})
	defer c.Close()
	for range 3 {
		Route(c, nil)
	}
	n := 0
	routed.Range(func(k, _ any) bool { n++; return true })
	if n != 1 {
		t.Fatalf("%d clients routed after three Routes of one client, want 1", n)
	}
}
