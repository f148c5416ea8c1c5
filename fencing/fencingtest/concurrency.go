package fencingtest

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
)

// Size of the concurrent-writers test: workers goroutines, each writing
// writesPerWorker times with distinct tokens.
const (
	workers         = 8
	writesPerWorker = 25
)

// testConcurrentWriters has many goroutines write one resource with distinct
// tokens, then checks that the store behaved like one that applies the calls
// one at a time, in an order consistent with real time:
//
//   - an accepted write's token is above every token whose acceptance had
//     completed before the write started (a later call cannot be ordered
//     before an earlier one);
//   - a rejected write's token is below some token presented by a call that
//     had started before the write returned (something really was higher);
//   - at the end the highest token is the largest one written, and the value
//     is the one written with it.
//
// Both checks only compare events the test observed in a known real-time
// order (a call's return is recorded after it returns, its start before it
// starts), so they hold for every correct store however calls interleave.
//
// The tokens of round i are i*workers+1 .. (i+1)*workers, dealt to the
// workers in a random order, and each worker writes its tokens in round
// order: the workers race on neighbouring tokens, so both accepted and
// rejected writes are frequent.
func testConcurrentWriters(t *testing.T, s fencing.Store) {
	seed := uint64(time.Now().UnixNano())
	rng := rand.New(rand.NewPCG(seed, seed))
	n := workers * writesPerWorker
	tokenOf := make([][]fencing.Token, workers) // tokenOf[w][i]: worker w's token in round i
	holderOf := make(map[fencing.Token]string, n)
	for w := range tokenOf {
		tokenOf[w] = make([]fencing.Token, writesPerWorker)
	}
	for i := range writesPerWorker {
		for w, k := range rng.Perm(workers) {
			tok := fencing.Token(i*workers + k + 1)
			tokenOf[w][i] = tok
			holderOf[tok] = fmt.Sprintf("w%d", w)
		}
	}

	var (
		mu           sync.Mutex
		completedMax fencing.Token // highest token whose acceptance has been observed
		startedMax   fencing.Token // highest token any call has presented so far
		accepted     int
	)
	ctx := context.Background()
	var wg sync.WaitGroup
	for w := range workers {
		wg.Go(func() {
			holder := fmt.Sprintf("w%d", w)
			for i := range writesPerWorker {
				tok := tokenOf[w][i]
				mu.Lock()
				floor := completedMax
				startedMax = max(startedMax, tok)
				mu.Unlock()

				err := s.Write(ctx, "r", tok, holder, []byte(valueFor(holder, tok)))

				mu.Lock()
				ceiling := startedMax
				switch {
				case err == nil:
					accepted++
					if tok < floor {
						t.Errorf("Write(token %d) accepted after token %d had been accepted (seed %d)", tok, floor, seed)
					}
					completedMax = max(completedMax, tok)
				case errors.Is(err, fencing.ErrStaleToken):
					if tok >= ceiling {
						t.Errorf("Write(token %d) rejected although no call had presented a higher token (seed %d): %v", tok, seed, err)
					}
				default:
					t.Errorf("Write(token %d): %v", tok, err)
				}
				mu.Unlock()
			}
		})
	}
	wg.Wait()
	if t.Failed() {
		return
	}
	top := fencing.Token(n)
	topHolder := holderOf[top]
	t.Logf("%d of %d concurrent writes accepted (seed %d)", accepted, n, seed)
	wantHighest(t, s, "r", top)
	wantRead(t, s, "r", top, topHolder, valueFor(topHolder, top))
}

func valueFor(holder string, tok fencing.Token) string {
	return fmt.Sprintf("%s wrote with token %d", holder, tok)
}
