package bench

import (
	"context"
	crand "crypto/rand"
	"encoding/hex"
	"errors"
	"math/rand/v2"
	"strconv"
	"sync/atomic"
	"time"

	"github.com/redis/go-redis/v9"
)

// rawLocker is the floor under every Redlock: SET key value NX PX ttl to
// every master in parallel, done when a majority granted; DEL the same way.
// No scripts, no ownership check on release, no fencing, no clean-up of a
// failed attempt beyond deleting its own grants.
type rawLocker struct {
	rdbs   []*redis.Client
	ttl    time.Duration
	quorum int
	seq    atomic.Uint64
}

var errRawNotAcquired = errors.New("raw: no majority granted")

type rawReply struct {
	i       int
	granted bool
	err     error
}

type rawHeld struct {
	r       *rawLocker
	key     string
	wait    bool
	replies chan rawReply // every master's SET answer, buffered
	seen    []rawReply    // answers read so far
}

func randomValue() string {
	var b [16]byte
	_, _ = crand.Read(b[:]) // never fails on Linux
	return hex.EncodeToString(b[:])
}

// attempt sends the SETs and reads answers until a majority granted or a
// majority became impossible; the other answers stay in h.replies.
func (r *rawLocker) attempt(ctx context.Context, key string, wait bool) (*rawHeld, bool) {
	value := randomValue()
	h := &rawHeld{r: r, key: key, wait: wait, replies: make(chan rawReply, len(r.rdbs))}
	for i, rdb := range r.rdbs {
		go func() {
			ok, err := rdb.SetNX(ctx, key, value, r.ttl).Result()
			h.replies <- rawReply{i: i, granted: ok, err: err}
		}()
	}
	granted, refused := 0, 0
	for granted < r.quorum && refused <= len(r.rdbs)-r.quorum {
		rep := <-h.replies
		h.seen = append(h.seen, rep)
		if rep.granted {
			granted++
		} else {
			refused++
		}
	}
	return h, granted >= r.quorum
}

func (r *rawLocker) lock(ctx context.Context, key string, wait bool) (held, error) {
	if !wait {
		// A fresh key per operation: release waits for a majority of DELs,
		// and a DEL still on its way to the slowest masters would refuse
		// the worker's next SET there (quorumlock and redsync keep their
		// key: their release is owner-checked and they count that case).
		key += ":" + strconv.FormatUint(r.seq.Add(1), 36)
	}
	for {
		h, ok := r.attempt(ctx, key, wait)
		if ok {
			return h, nil
		}
		if !wait {
			// The key is private to the worker in the one-attempt scenarios:
			// deleting it everywhere, as release does, is safe.
			_ = h.release(ctx)
			return nil, errRawNotAcquired
		}
		_ = h.release(ctx) // only our own grants: see release
		t := time.NewTimer(time.Duration(5+rand.IntN(10)) * time.Millisecond)
		select {
		case <-ctx.Done():
			t.Stop()
			return nil, ctx.Err()
		case <-t.C:
		}
	}
}

func (r *rawLocker) close() error { return nil }

// release deletes the key. One-attempt (private key): DEL on every master,
// done when a majority answered. Waiting (shared hot key): wait for every
// SET answer first and DEL only where this attempt was granted, so that it
// never deletes another contender's key.
func (h *rawHeld) release(ctx context.Context) error {
	r := h.r
	targets := make([]int, 0, len(r.rdbs))
	need := r.quorum
	if h.wait {
		for len(h.seen) < len(r.rdbs) {
			h.seen = append(h.seen, <-h.replies)
		}
		for _, rep := range h.seen {
			if rep.granted {
				targets = append(targets, rep.i)
			}
		}
		need = len(targets)
	} else {
		for i := range r.rdbs {
			targets = append(targets, i)
		}
	}
	errs := make(chan error, len(targets))
	for _, i := range targets {
		go func() { errs <- r.rdbs[i].Del(ctx, h.key).Err() }()
	}
	var first error
	ok, failed := 0, 0
	for ok < need && failed <= len(targets)-need {
		if err := <-errs; err != nil {
			failed++
			first = err
		} else {
			ok++
		}
	}
	if ok < need {
		return first
	}
	return nil
}
