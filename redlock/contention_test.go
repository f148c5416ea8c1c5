package redlock

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// bucketRaiser is a go-redis hook on one master's client that, for the
// first n write-back rounds it sees, sets the key's bucket counter to the
// very token the write-back carries just before it arrives: another key of
// the same bucket taking that token first, as many times in a row.
type bucketRaiser struct {
	admin redis.UniversalClient
	mu    sync.Mutex
	left  int
}

func (h *bucketRaiser) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *bucketRaiser) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *bucketRaiser) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, cmd := range cmds {
			args := cmd.Args()
			// evalsha SHA 4 key bucket cert incarnation value token
			if len(args) != 9 || cmd.Name() != "evalsha" || args[1] != writeBackScript.Hash() {
				continue
			}
			h.mu.Lock()
			raise := h.left > 0
			h.left--
			h.mu.Unlock()
			if raise {
				if err := h.admin.Set(ctx, fmt.Sprint(args[4]), fmt.Sprint(args[8]), 0).Err(); err != nil {
					return err
				}
			}
		}
		return next(ctx, cmds)
	}
}

// Keys of one bucket racing for its counter: five write-back rounds in a
// row find the counter already at their token on every master. The
// acquisition keeps going above it while its validity lasts and holds the
// key with a token above every value the others took (with three rounds,
// as before, it failed as not acquired although the key was free).
func TestWriteBackOutlastsBucketContention(t *testing.T) {
	r := newRig(t, 5)
	ctx := context.Background()
	bucket := keys.Bucket(keys.BucketOf("contended", DefaultFenceBuckets))
	admins := r.Clients(t)
	for i, m := range r.clients {
		// Above any proposal of a new Client: the attempt takes round 2.
		if err := admins[i].Set(ctx, bucket, "100", 0).Err(); err != nil {
			t.Fatal(err)
		}
		m.AddHook(&bucketRaiser{admin: admins[i], left: 5})
	}
	c := r.client(t)
	l, err := c.TryLock(ctx, "contended", 10*time.Second)
	if err != nil {
		t.Fatalf("TryLock of a free key under bucket contention: %v", err)
	}
	defer l.Release(ctx)
	for i, a := range admins {
		v, err := a.Get(ctx, bucket).Result()
		if err != nil {
			t.Fatal(err)
		}
		n, _ := strconv.ParseUint(v, 10, 64)
		if uint64(l.Token()) < n {
			t.Fatalf("token %d below master %d's counter %d", l.Token(), i, n)
		}
	}
	if l.Token() <= 105 {
		t.Fatalf("token %d: not above the five values the other keys took (101 and up)", l.Token())
	}
}
