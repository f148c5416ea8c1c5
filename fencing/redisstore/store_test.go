package redisstore_test

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"sync/atomic"
	"testing"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencingtest"
	"github.com/quorumlock/quorumlock/fencing/redisstore"
)

// TestConformanceRedisServer runs the conformance suite against a real
// redis-server; each subtest gets its own key prefix.
func TestConformanceRedisServer(t *testing.T) {
	client := clustertest.StartServer(t, clustertest.NoPersistence).Client(t)
	var n atomic.Int64
	fencingtest.RunStoreConformance(t, func(t *testing.T) fencing.Store {
		return redisstore.New(client, redisstore.WithPrefix(fmt.Sprintf("test%d:", n.Add(1))))
	})
}

// TestScriptAtomicUnderConcurrentWriters hammers one resource from many
// connections with distinct tokens while an observer reads the raw hash: the
// three fields must always belong to one write (the value and holder are the
// ones written with the highest token) and highest must never go down.
func TestScriptAtomicUnderConcurrentWriters(t *testing.T) {
	srv := clustertest.StartServer(t, clustertest.NoPersistence)
	const writers, perWriter = 8, 200
	store := redisstore.New(srv.Client(t, func(o *redis.Options) { o.PoolSize = writers }))
	observer := srv.Client(t)
	ctx := context.Background()
	key := store.Key("doc")

	holderOf := func(tok fencing.Token) string { return "w" + strconv.Itoa(int(tok)%writers) }
	valueOf := func(tok fencing.Token) string { return "value of " + tok.String() }

	done := make(chan struct{})
	var observed sync.WaitGroup
	observed.Go(func() {
		var last fencing.Token
		for {
			select {
			case <-done:
				return
			default:
			}
			m, err := observer.HGetAll(ctx, key).Result()
			if err != nil {
				t.Errorf("HGETALL: %v", err)
				return
			}
			if len(m) == 0 {
				continue
			}
			tok, err := fencing.ParseToken(m["highest"])
			if err != nil {
				t.Errorf("hash %v: %v", m, err)
				return
			}
			if tok < last {
				t.Errorf("highest went down from %d to %d", last, tok)
			}
			last = tok
			if m["holder"] != holderOf(tok) || m["value"] != valueOf(tok) {
				t.Errorf("torn hash: %v (want holder %s, value %q)", m, holderOf(tok), valueOf(tok))
				return
			}
		}
	})

	// Writer w writes tokens w+1, w+1+writers, ... so the writers race on
	// neighbouring tokens all the time.
	var accepted atomic.Int64
	var wg sync.WaitGroup
	for w := range writers {
		wg.Go(func() {
			for i := range perWriter {
				tok := fencing.Token(w + 1 + i*writers)
				err := store.Write(ctx, "doc", tok, holderOf(tok), []byte(valueOf(tok)))
				switch {
				case err == nil:
					accepted.Add(1)
				case !isStale(err):
					t.Errorf("Write(%d): %v", tok, err)
					return
				}
			}
		})
	}
	wg.Wait()
	close(done)
	observed.Wait()

	top := fencing.Token(writers * perWriter)
	if h, err := store.Highest(ctx, "doc"); err != nil || h != top {
		t.Fatalf("Highest = %d, %v; want %d", h, err, top)
	}
	v, err := store.Read(ctx, "doc", top, holderOf(top))
	if err != nil || string(v) != valueOf(top) {
		t.Fatalf("Read = %q, %v; want %q", v, err, valueOf(top))
	}
	t.Logf("%d of %d writes accepted", accepted.Load(), writers*perWriter)
}
