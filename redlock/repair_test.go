package redlock

import (
	"bytes"
	"context"
	"errors"
	"io"
	"net"
	"slices"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// Defect 3 of issue 7: an Extend to a shorter TTL that fails has already
// shortened the keys on the masters that ran it. Here every master runs the
// PEXPIRE at once but the answers come back late (the client was paused, or
// the network slow), so the round fails. The lease's deadline must come
// forward with the keys, or it reports Err() == nil for the rest of the old
// TTL while another client takes the key after 2 s.
func TestFailedShorterExtendBringsTheDeadlineForward(t *testing.T) {
	r := newRig(t, 5)
	late := &lateReplies{sha: extendScript.Hash(), delay: 3 * time.Second}
	for _, rc := range r.clients {
		if err := extendScript.Load(context.Background(), rc).Err(); err != nil { // EVALSHA runs at once
			t.Fatal(err)
		}
		rc.AddHook(late)
	}
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 30*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	start := time.Now()
	err = lease.Extend(ctx, 2*time.Second)
	if !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Extend whose answers came late: %v; want ErrNoQuorum", err)
	}
	if limit := time.Now().Add(c.validity(2 * time.Second)); lease.ValidUntil().After(limit) {
		t.Fatalf("ValidUntil %v after a failed 2s Extend; want at most %v", lease.ValidUntil(), limit)
	}
	other, err := New(r.Clients(t), WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer other.Close()
	ctx5, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	l2, err := other.Lock(ctx5, "k", time.Second)
	if err != nil {
		t.Fatalf("another client once the shortened keys expired: %v", err)
	}
	took := time.Since(start)
	defer l2.Release(ctx)
	if err := lease.Err(); !errors.Is(err, ErrLockLost) {
		t.Fatalf("the first lease reports %v while another client holds the key (acquired %v after the Extend began)", err, took)
	}
	select {
	case <-lease.Done():
	default:
		t.Fatal("the first lease's Done is open while another client holds the key")
	}
}

// lateReplies delays the answers of one script (by SHA), as if the client
// had been paused right after the command ran on the master.
type lateReplies struct {
	sha   string
	delay time.Duration
}

func (h *lateReplies) DialHook(next redis.DialHook) redis.DialHook { return next }

func (h *lateReplies) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		if a := cmd.Args(); len(a) > 1 && a[1] == h.sha {
			time.Sleep(h.delay)
		}
		return err
	}
}

func (h *lateReplies) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, cmd := range cmds {
			if a := cmd.Args(); len(a) > 1 && a[1] == h.sha {
				time.Sleep(h.delay)
				break
			}
		}
		return err
	}
}

// failOnStalledMaster stalls master 4 (resumed at the test's end) and makes
// n TryLocks of a key another owner holds on masters 0–3: each failed
// attempt leaves master 4's cleaner one entry, its SET unanswered there.
func failOnStalledMaster(t *testing.T, r *rig, c *Client, n int) {
	t.Helper()
	ctx := context.Background()
	for i := range 4 {
		if err := r.clients[i].Set(ctx, "held", "another owner", time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	pause(t, r, 4)
	t.Cleanup(func() { resume(t, r, 4) })
	for range n {
		if _, err := c.TryLock(ctx, "held", time.Minute); !errors.Is(err, ErrNotAcquired) {
			t.Fatalf("TryLock on a held key: %v", err)
		}
	}
}

// Defect 4 of issue 7: under a stalled master, a caller retrying TryLock on a
// held key leaves one cleanup entry per failed attempt. The cleaner's memory
// is bounded.
func TestCleanerMemoryIsBounded(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(50*time.Millisecond))
	c.cleaners[4].limit = 20
	failOnStalledMaster(t, r, c, 100)
	eventually(t, 5*time.Second, "cleanup entries dropped past the bound", func() bool {
		cl := c.cleaners[4]
		cl.mu.Lock()
		defer cl.mu.Unlock()
		return cl.dropped > 0
	})
	if n := c.cleaners[4].pendingCount(); n > 20 || n == 0 {
		t.Fatalf("%d entries pending on the stalled master; want 1..20", n)
	}
}

// A stalled master's cleaner pauses between round trips, up to maxBackoff,
// however many entries are due: it does not send every due batch at once,
// each failing as busy and going back into its heap (a tenth of the
// client's CPU with one or two stalled masters under load).
func TestCleanerPausesWhileItsMasterIsStalled(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(50*time.Millisecond))
	failOnStalledMaster(t, r, c, 2000)
	// The pause doubles from minBackoff while round trips fail: past
	// 10+20+...+640 ms and seven round trips' timeouts it is at maxBackoff.
	time.Sleep(2 * time.Second)
	cl := c.cleaners[4]
	pending, before := cl.pendingCount(), cl.roundCount()
	if pending < 1000 {
		t.Fatalf("%d entries pending on the stalled master; want the failed attempts' (about 2000)", pending)
	}
	const window = 3 * time.Second
	time.Sleep(window)
	// With a pause of at least 640 ms between them, at most five round trips
	// begin in the window. Entry by entry (each backing off to a second), the
	// due batches of 256 would take at least 2000/256 per second.
	if n := cl.roundCount() - before; n > 5 {
		t.Fatalf("the cleaner began %d round trips to a stalled master in %v with %d entries pending; want at most 5", n, window, pending)
	}
	// The pause is no dead end: once the master answers, the entries go.
	resume(t, r, 4)
	eventually(t, 10*time.Second, "the resumed master's entries settled", func() bool { return cl.pendingCount() == 0 })
}

// A master that refused a lease's SET holds nothing of that lease, ever
// (each attempt's value goes to each master in one call): when it stalls
// before the release, its unanswered delete is not retried in the
// background. The delete of a lease it granted is.
func TestReleaseRetriesOnlyWhereTheSETMayHaveLanded(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(50*time.Millisecond))
	ctx := context.Background()
	if err := r.clients[4].Set(ctx, "refused-on-4", "another owner", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	refused, err := c.TryLock(ctx, "refused-on-4", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	granted, err := c.TryLock(ctx, "granted-on-4", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	pause(t, r, 4)
	defer resume(t, r, 4)
	for _, l := range []*Lease{refused, granted} {
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	cl := c.cleaners[4]
	// The granted lease's delete times out, is sent again, times out, and
	// its entry is kept: the refused lease's, released first, would be
	// there by then.
	eventually(t, 5*time.Second, "the granted lease's delete kept for the stalled master", func() bool { return cl.pendingCount() > 0 })
	time.Sleep(300 * time.Millisecond)
	var pending []string
	eventually(t, 5*time.Second, "a moment with no round trip in flight", func() bool {
		cl.mu.Lock()
		defer cl.mu.Unlock()
		pending = pending[:0]
		for _, e := range cl.pending {
			pending = append(pending, e.key)
		}
		return cl.out == 0
	})
	if len(pending) != 1 || pending[0] != "granted-on-4" {
		t.Fatalf("entries pending on the stalled master: %q; want only the granted lease's key", pending)
	}
}

// stillOut is the source of a SET whose fate is unknown: the key may be
// there, and a "not there" proves nothing until the settle window passed.
type stillOut struct{}

func (stillOut) fate() outcome { return transport }

// One key of another type in a cleaner's batch is that key's answer alone:
// the batch's other keys are deleted, and every entry settles. Before, the
// key's WRONGTYPE failed the whole batch, whose entries were retried until
// their horizon.
func TestCleanerBatchSettlesAroundAKeyOfAnotherType(t *testing.T) {
	r := newRig(t, 5)
	c := r.client(t, WithMasterTimeout(50*time.Millisecond))
	ctx := context.Background()
	keys := []string{"k1", "k2", "k3", "k4", "k5"}
	for _, k := range keys {
		var err error
		if k == "k3" {
			err = r.clients[0].RPush(ctx, k, "another program's").Err()
		} else {
			err = r.clients[0].Set(ctx, k, "ours", time.Minute).Err()
		}
		if err != nil {
			t.Fatal(err)
		}
	}
	// While master 0 is stalled the entries wait in the heap together: the
	// first round trip may take k1 alone, the next takes the rest as one
	// batch.
	pause(t, r, 0)
	cl := c.cleaners[0]
	for _, k := range keys {
		cl.add(k, "ours", stillOut{}, time.Now().Add(time.Minute))
	}
	time.Sleep(200 * time.Millisecond)
	resume(t, r, 0)
	eventually(t, 10*time.Second, "every entry settled", func() bool { return cl.pendingCount() == 0 })
	for _, k := range keys {
		typ, err := r.clients[0].Type(ctx, k).Result()
		if err != nil {
			t.Fatal(err)
		}
		if want := map[bool]string{true: "list", false: "none"}[k == "k3"]; typ != want {
			t.Errorf("%s is a %s after the cleanup; want %s", k, typ, want)
		}
	}
}

// Defect 5 of issue 7: Lock calls queued behind each other return ErrClosed
// when the Client closes, and no attempt starts after Close.
func TestQueuedLocksEndAtClose(t *testing.T) {
	r := newRig(t, 5)
	holder := r.client(t)
	ctx := context.Background()
	lease, err := holder.TryLock(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	c, err := New(r.clients, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	errs := make(chan error, 3)
	for range 3 {
		go func() {
			_, err := c.Lock(ctx, "k", 10*time.Second)
			errs <- err
		}()
	}
	time.Sleep(200 * time.Millisecond) // one heads the line, two wait in it
	if err := c.Close(); err != nil {
		t.Fatal(err)
	}
	for range 3 {
		select {
		case err := <-errs:
			if !errors.Is(err, ErrClosed) {
				t.Fatalf("Lock after Close: %v; want ErrClosed", err)
			}
		case <-time.After(5 * time.Second):
			t.Fatal("a queued Lock did not return after Close")
		}
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	time.Sleep(100 * time.Millisecond)
	if vals := r.values(t, "k"); countNonEmpty(vals) != 0 {
		t.Fatalf("keys placed after Close: %q", vals)
	}
	if _, err := c.TryLock(ctx, "k", time.Second); !errors.Is(err, ErrClosed) {
		t.Fatalf("TryLock after Close: %v", err)
	}
}

// Defect 6 of issue 7: with go-redis's default retries, a release whose
// reply is lost is sent again; the retry finds the key gone. Release must
// not report its own delete as a lost lease.
func TestReleaseRetriedByGoRedisIsNotLoss(t *testing.T) {
	r := newRig(t, 5)
	var cut atomic.Int32
	sha := []byte(releaseScript.Hash())
	clients := make([]redis.UniversalClient, len(r.Servers))
	for i, s := range r.Servers {
		var once sync.Once
		clients[i] = redis.NewClient(&redis.Options{
			Addr: s.Addr, ContextTimeoutEnabled: true, // MaxRetries: go-redis's default, 3
			Dialer: func(ctx context.Context, network, addr string) (net.Conn, error) {
				conn, err := (&net.Dialer{}).DialContext(ctx, network, addr)
				if err != nil {
					return nil, err
				}
				return &replyDropper{Conn: conn, match: sha, once: &once, cut: &cut}, nil
			},
		})
		t.Cleanup(func() { _ = clients[i].Close() })
	}
	c, err := New(clients, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release whose first replies were lost and retried: %v", err)
	}
	if cut.Load() == 0 {
		t.Fatal("no reply was dropped: the test proves nothing")
	}
	gone(t, r.clients, "k") // the masters not waited for finish in the background
}

// replyDropper runs the first command containing match on the server, then
// loses its reply (the connection breaks), as a network fault would.
type replyDropper struct {
	net.Conn
	match []byte
	once  *sync.Once
	cut   *atomic.Int32
	armed bool
}

func (d *replyDropper) Write(p []byte) (int, error) {
	if bytes.Contains(p, d.match) {
		d.once.Do(func() { d.armed = true })
	}
	return d.Conn.Write(p)
}

func (d *replyDropper) Read(p []byte) (int, error) {
	if !d.armed {
		return d.Conn.Read(p)
	}
	_, _ = d.Conn.Read(p) // the reply arrives: the command ran
	d.cut.Add(1)
	_ = d.Conn.Close()
	return 0, io.ErrUnexpectedEOF
}

// releaseEach, the cleaner's request, answers each key apart through
// release.lua on a real server: deleted, another type (read as another
// owner's), another owner's, not there.
func TestReleaseEachAnswersEachKeyWithTheScript(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	rc := r.clients[0]
	if err := rc.Set(ctx, "k1", "ours", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.RPush(ctx, "k2", "another program's").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, "k3", "theirs", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	keys := []string{"k1", "k2", "k3", "k4"}
	rd := startRound(ctx, c, []int{0}, time.Second, func(m *master) request[[]int64] {
		return releaseEach(m, keys, []string{"ours", "ours", "ours", "ours"})
	})
	var got []int64
	var gotErr error
	rd.await(func(_ int, rep reply[[]int64]) (outcome, error) {
		got, gotErr = rep.val, rep.err
		return yes, nil
	})
	if gotErr != nil {
		t.Fatal(gotErr)
	}
	if want := []int64{1, -1, -1, 0}; !slices.Equal(got, want) {
		t.Fatalf("releaseEach answered %v; want %v (deleted, another type, another owner's, not there)", got, want)
	}
}
