package e2e_test

import (
	"context"
	"errors"
	"fmt"
	"log/slog"
	"math/rand/v2"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// history checks, as holders act, the two properties of fencing: tokens of
// successive holders strictly increase, and the store never accepts a write
// from an older holder after a newer holder's write was accepted.
type history struct {
	mu           sync.Mutex
	store        fencing.Store
	acquisitions int
	lastToken    fencing.Token
	newestWriter int // acquisition number of the newest holder whose write was accepted
	accepted     int
	rejected     int
	violations   []string
}

// acquired records a holder inside its critical section and returns its
// acquisition number (1, 2, ...).
func (h *history) acquired(tok fencing.Token) int {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.acquisitions++
	if tok <= h.lastToken {
		h.violations = append(h.violations, fmt.Sprintf("acquisition %d got token %d after token %d", h.acquisitions, tok, h.lastToken))
	}
	h.lastToken = max(h.lastToken, tok)
	return h.acquisitions
}

// write is a fenced write by holder number seq, serialised so that the order
// of acceptances is the order seen here.
func (h *history) write(ctx context.Context, seq int, tok fencing.Token) {
	h.mu.Lock()
	defer h.mu.Unlock()
	err := h.store.Write(ctx, "ledger", tok, fmt.Sprintf("holder-%d", seq), []byte(fmt.Sprint(seq)))
	switch {
	case err == nil:
		h.accepted++
		if seq < h.newestWriter {
			h.violations = append(h.violations, fmt.Sprintf("write of holder %d (token %d) accepted after holder %d wrote", seq, tok, h.newestWriter))
		}
		h.newestWriter = max(h.newestWriter, seq)
	case errors.Is(err, fencing.ErrStaleToken):
		h.rejected++
	default:
		h.violations = append(h.violations, fmt.Sprintf("write of holder %d: unexpected error %v", seq, err))
	}
}

// countingHandler counts log records whose message contains a word.
type countingHandler struct {
	slog.Handler
	word string
	n    *atomic.Int64
}

func (c countingHandler) Handle(ctx context.Context, r slog.Record) error {
	if strings.Contains(r.Message, c.word) {
		c.n.Add(1)
	}
	return nil
}

func (c countingHandler) Enabled(context.Context, slog.Level) bool { return true }

// 2,000 acquisitions of one key by competing clients while a minority of
// masters is paused, killed and restarted without persistence at random.
// Quarantine is on (the default).
func TestTokensUnderMinorityFaults(t *testing.T) {
	const (
		want       = 2000
		ttl        = time.Second
		clients    = 4
		perClient  = 2
		staleEvery = 5 // one holder in 5 writes again after its lease ended
	)
	masters := clustertest.Start(t, 5)
	t.Cleanup(masters.ResumeAll)
	h := &history{store: fencing.NewMemoryStore()}
	var quarantined atomic.Int64
	logger := slog.New(countingHandler{Handler: slog.DiscardHandler, word: "quarantined", n: &quarantined})

	var lockers []*redlock.Client
	for range clients {
		c, err := redlock.New(masters.Clients(t), redlock.WithLogger(logger))
		if err != nil {
			t.Fatal(err)
		}
		t.Cleanup(func() { _ = c.Close() })
		lockers = append(lockers, c)
	}

	stop := make(chan struct{})
	nem := newNemesis(t, masters, rand.Uint64(), 3*ttl)
	nemDone := make(chan struct{})
	go func() { nem.run(stop); close(nemDone) }()

	ctx, cancel := context.WithTimeout(context.Background(), 4*time.Minute)
	defer cancel()
	var claimed, failures atomic.Int64
	var stale sync.WaitGroup
	var wg sync.WaitGroup
	for w := range clients * perClient {
		c := lockers[w%clients]
		wg.Go(func() {
			for claimed.Add(1) <= want {
				lease, err := c.Lock(ctx, "ledger", ttl)
				if err != nil {
					if ctx.Err() != nil {
						t.Errorf("gave up with %d acquisitions left: %v", want-claimed.Load(), err)
						return
					}
					failures.Add(1)
					claimed.Add(-1)
					continue
				}
				seq := h.acquired(lease.Token())
				h.write(ctx, seq, lease.Token())
				if seq%staleEvery == 0 {
					// A holder that was paused: it writes once more after its lease ended.
					stale.Go(func() {
						<-lease.Done()
						time.Sleep(time.Duration(rand.IntN(50)) * time.Millisecond)
						h.write(ctx, seq, lease.Token())
					})
				}
				_ = lease.Release(ctx) // may fail under faults; the keys then expire
			}
		})
	}
	wg.Wait()
	close(stop)
	<-nemDone
	stale.Wait()

	h.mu.Lock()
	defer h.mu.Unlock()
	t.Logf("%d acquisitions, %d failed Lock calls; %d writes accepted, %d stale rejected; faults: %d pauses, %d kills, %d restarts; %d quarantine events",
		h.acquisitions, failures.Load(), h.accepted, h.rejected, nem.pauses, nem.kills, nem.restarts, quarantined.Load())
	for _, v := range h.violations[:min(len(h.violations), 10)] {
		t.Error(v)
	}
	if h.acquisitions != want {
		t.Fatalf("%d acquisitions, want %d", h.acquisitions, want)
	}
	if nem.pauses == 0 || nem.kills+nem.restarts == 0 {
		t.Fatal("the nemesis injected no pause or no restart: the run proves nothing")
	}
	if quarantined.Load() == 0 {
		t.Fatal("no master was quarantined although masters restarted without persistence")
	}
	if h.rejected == 0 {
		t.Fatal("no stale write was rejected: the stale holders never raced a newer one")
	}
}
