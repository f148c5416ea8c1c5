package redlock

import (
	"context"
	"errors"
	"fmt"
	"strconv"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/cenkalti/backoff/v4"
)

// Several processes (Clients) with several goroutines each contend for one
// key; an independent counter inside the critical section must never see two
// holders.
func TestMutualExclusionUnderContention(t *testing.T) {
	r := newRig(t, 5)
	const clients, perClient, rounds = 4, 4, 15
	var inside, maxInside, total atomic.Int64
	var lastToken atomic.Uint64
	var wg sync.WaitGroup
	errs := make(chan error, clients*perClient)
	for range clients {
		c := r.client(t)
		for range perClient {
			wg.Go(func() {
				for range rounds {
					ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
					lease, err := c.Lock(ctx, "counter", 5*time.Second)
					cancel()
					if err != nil {
						errs <- err
						return
					}
					n := inside.Add(1)
					for {
						m := maxInside.Load()
						if n <= m || maxInside.CompareAndSwap(m, n) {
							break
						}
					}
					if tok := uint64(lease.Token()); tok <= lastToken.Load() {
						errs <- errors.New("token did not grow")
					} else {
						lastToken.Store(tok)
					}
					total.Add(1)
					time.Sleep(time.Millisecond)
					inside.Add(-1)
					if err := lease.Release(context.Background()); err != nil {
						errs <- err
						return
					}
				}
			})
		}
	}
	wg.Wait()
	close(errs)
	for err := range errs {
		t.Error(err)
	}
	if maxInside.Load() != 1 {
		t.Fatalf("%d holders at once", maxInside.Load())
	}
	if total.Load() != clients*perClient*rounds {
		t.Fatalf("%d critical sections, want %d", total.Load(), clients*perClient*rounds)
	}
}

// With a retry interval of an hour, only the release notification can wake
// the waiter.
func TestLockWakesOnRelease(t *testing.T) {
	r := newRig(t, 5)
	hour := func() backoff.BackOff { return backoff.NewConstantBackOff(time.Hour) }
	holder, waiter := r.client(t), r.client(t, WithRetry(hour))
	ctx := context.Background()
	lease, err := holder.TryLock(ctx, "wake", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	got := make(chan error, 1)
	go func() {
		ctx, cancel := context.WithTimeout(ctx, 20*time.Second)
		defer cancel()
		l, err := waiter.Lock(ctx, "wake", 30*time.Second)
		if err == nil {
			err = l.Release(ctx)
		}
		got <- err
	}()
	// The waiter's first attempt fails; then it sleeps on the backoff.
	eventually(t, 10*time.Second, "waiter subscribed", func() bool {
		n, err := r.clients[0].PubSubNumSub(ctx, keys.ChannelPrefix+"wake").Result()
		return err == nil && n[keys.ChannelPrefix+"wake"] > 0
	})
	time.Sleep(100 * time.Millisecond)
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := <-got; err != nil {
		t.Fatalf("waiter: %v", err)
	}
}

func TestAutoExtendKeepsLeaseAndReportsLoss(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "auto", 300*time.Millisecond, WithAutoExtend())
	if err != nil {
		t.Fatal(err)
	}
	first := lease.ValidUntil()
	time.Sleep(time.Second) // > 3 TTLs
	select {
	case <-lease.Done():
		t.Fatalf("auto-extended lease ended: %v", context.Cause(lease.Context()))
	default:
	}
	if !lease.ValidUntil().After(first) {
		t.Fatal("ValidUntil did not move")
	}
	pause(t, r, 0, 1, 2)
	select {
	case <-lease.Done():
	case <-time.After(5 * time.Second):
		t.Fatal("Done not closed after renewal became impossible")
	}
	if cause := context.Cause(lease.Context()); !errors.Is(cause, ErrLockLost) {
		t.Fatalf("cause %v, want ErrLockLost", cause)
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrLockLost) {
		t.Fatalf("Release after loss: %v, want ErrLockLost", err)
	}
}

func TestTokensGrowAcrossHolders(t *testing.T) {
	r := newRig(t, 5)
	a, b := r.client(t), r.client(t)
	ctx := context.Background()
	var last uint64
	for i := range 20 {
		c := a
		if i%2 == 1 {
			c = b
		}
		lease, err := c.TryLock(ctx, "fenced", 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if tok := uint64(lease.Token()); tok <= last {
			t.Fatalf("acquisition %d: token %d after %d", i, tok, last)
		} else {
			last = tok
		}
		if err := lease.Extend(ctx, 5*time.Second); err != nil {
			t.Fatal(err)
		}
		if uint64(lease.Token()) != last {
			t.Fatal("Extend changed the token")
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	// The counter is all a key leaves behind, and it never expires. It lives
	// on every master that took part in a write-back: at least a majority.
	present := 0
	for i, rc := range r.clients {
		switch ttl := rc.PTTL(ctx, keys.Bucket(keys.BucketOf("fenced", DefaultFenceBuckets))).Val(); ttl {
		case -1:
			present++
		case -2: // this master never was among the first majority to grant
		default:
			t.Fatalf("master %d: counter has a TTL of %v; it must never expire", i, ttl)
		}
	}
	if present < a.Quorum() {
		t.Fatalf("counter on %d masters, want at least %d", present, a.Quorum())
	}
	// Release returns once a majority deleted; the rest follow in the background.
	eventually(t, 5*time.Second, "no lock key left after the last release", func() bool {
		return countNonEmpty(r.values(t, "fenced")) == 0
	})
}

func TestReleaseTwice(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "twice", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrReleased) {
		t.Fatalf("second Release: %v, want ErrReleased", err)
	}
	if cause := context.Cause(lease.Context()); !errors.Is(cause, ErrReleased) {
		t.Fatalf("cause %v, want ErrReleased", cause)
	}
}

func TestLockReturnsContextError(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	held, err := c.TryLock(context.Background(), "busy", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	defer held.Release(context.Background())
	ctx, cancel := context.WithTimeout(context.Background(), 200*time.Millisecond)
	defer cancel()
	_, err = c.Lock(ctx, "busy", 10*time.Second)
	if !errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrNotAcquired) {
		t.Fatalf("Lock on a held key until the deadline: %v; want DeadlineExceeded and ErrNotAcquired", err)
	}
}

// commandCalls reads a command's call count from INFO commandstats on each
// master (0 when it never ran).
func commandCalls(t *testing.T, r *rig, cmd string) []int {
	t.Helper()
	out := make([]int, len(r.clients))
	for i, rc := range r.clients {
		info, err := rc.Info(context.Background(), "commandstats").Result()
		if err != nil {
			t.Fatal(err)
		}
		for _, line := range strings.Split(info, "\r\n") {
			if v, ok := strings.CutPrefix(line, "cmdstat_"+cmd+":calls="); ok {
				out[i], _ = strconv.Atoi(strings.SplitN(v, ",", 2)[0])
			}
		}
	}
	return out
}

// Lock of a key nobody holds sends what TryLock sends: no SUBSCRIBE, no
// UNSUBSCRIBE, no PUBSUB NUMSUB (counted in every master's commandstats,
// which count a script's own calls too). A Lock that has to wait does
// subscribe, which shows the count can move. Every Lock takes a key of its
// own: Release returns once a majority deleted, so a key locked again at
// once may still sit on the last master, whose refusal counts the waiters
// (PUBSUB NUMSUB) though the key is free by quorum.
func TestLockOfAFreeKeySubscribesToNothing(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t)
	ctx := context.Background()
	warmUp(t, c)
	resetCommandStats(t, r)
	for i := range 20 {
		l, err := c.Lock(ctx, fmt.Sprintf("free:%d", i), 5*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	for _, cmd := range []string{"subscribe", "unsubscribe", "pubsub|numsub"} {
		if n := commandCalls(t, r, cmd); countNonZero(n) != 0 {
			t.Fatalf("%s calls per master after 20 Locks of free keys: %v; want none", cmd, n)
		}
	}
	held, err := c.TryLock(ctx, "held", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	go func() { time.Sleep(200 * time.Millisecond); _ = held.Release(ctx) }()
	wctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l, err := r.client(t).Lock(wctx, "held", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	_ = l.Release(ctx)
	if n := commandCalls(t, r, "subscribe"); countNonZero(n) == 0 {
		t.Fatalf("a Lock that waited subscribed nowhere: %v", n)
	}
}

func countNonZero(v []int) int {
	n := 0
	for _, x := range v {
		if x != 0 {
			n++
		}
	}
	return n
}

// While a Lock's first attempt on a free key is in flight, a second Lock of
// the same key on the same Client lines up behind it and sends nothing: 32
// goroutines starting together make one attempt, not 32 that split the vote.
// Three masters are paused so that the first attempt stays in flight (for
// its per-master timeout of 10 s); the two live masters count the acquire
// scripts.
func TestLockBehindAFastPathAttemptSendsNothing(t *testing.T) {
	r := newRig(t, 5, withRedisOptions(patientClients))
	c := r.client(t, WithMasterTimeout(10*time.Second))
	warm, err := c.Lock(context.Background(), "warm", 30*time.Second) // certifies the fresh masters
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
	// Release returns at a majority: its last deletes (EVALSHA too) must
	// have run before the count starts.
	gone(t, r.clients, "warm")
	resetCommandStats(t, r)
	pause(t, r, 2, 3, 4)
	defer resume(t, r, 2, 3, 4)
	ctx, cancel := context.WithCancel(context.Background())
	defer cancel()
	live := &rig{clients: r.clients[:2]} // commandCalls would wait for the paused ones
	evalsha := func() int { n := commandCalls(t, live, "evalsha"); return max(n[0], n[1]) }
	var wg sync.WaitGroup
	defer wg.Wait()
	defer cancel()
	wg.Go(func() { _, _ = c.Lock(ctx, "fast", 30*time.Second) })
	for evalsha() < 1 {
		time.Sleep(time.Millisecond)
	}
	wg.Go(func() { _, _ = c.Lock(ctx, "fast", 30*time.Second) })
	lineLen := func() int {
		c.queues.mu.Lock()
		defer c.queues.mu.Unlock()
		return len(c.queues.lines["fast"])
	}
	for {
		l := lineLen()
		n := evalsha()
		if l < 2 && n < 2 {
			time.Sleep(time.Millisecond)
			continue
		}
		if n != 1 || l != 2 {
			t.Fatalf("a second Lock during the first's attempt: %d acquire scripts on a live master, line of %d; want 1 and 2", n, l)
		}
		break
	}
}
