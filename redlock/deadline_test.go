package redlock

import (
	"context"
	"fmt"
	"slices"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// gatedTimeout is the per-master timeout of gatedRig's Client.
const gatedTimeout = 300 * time.Millisecond

// gatedRig is five real masters, master 4's script pipelines passing a
// pipelineGate for scripts (shut), and a Client with a per-master timeout of gatedTimeout.
// Its go-redis clients keep go-redis's defaults: a pipeline is bounded by
// its read timeout (a minute here), not by the context's deadline, so a
// held worker stays held.
func gatedRig(t *testing.T) (*rig, *pipelineGate, *Client) {
	t.Helper()
	r := newRig(t, 5, withRedisOptions(func(o *redis.Options) { o.ContextTimeoutEnabled = false; patientClients(o) }))
	gate := newPipelineGate("evalsha", true)
	r.clients[4].(*redis.Client).AddHook(gate)
	c := r.client(t, WithMasterTimeout(gatedTimeout))
	t.Cleanup(gate.open) // before Close, which waits for the held pipelines
	return r, gate, c
}

// A script call that waits in its master's queue past its deadline is never
// sent: the round stopped waiting for that master long before, and a SET
// landing later would leave a key that no attempt accounts for. Both of
// master 4's workers are held at a gate with a pipeline each; a third lock's
// call to master 4 queues behind them and its deadline passes. When the
// gate opens, the workers drop that call (ErrMasterBusy) instead of sending
// it: master 4 never sees the key, while a lock queued after the gate opened
// reaches it.
func TestCallQueuedPastItsDeadlineIsNeverSent(t *testing.T) {
	ctx := context.Background()
	r, gate, c := gatedRig(t)

	var leases []*Lease
	for i, key := range []string{"busy:1", "busy:2"} {
		l, err := c.TryLock(ctx, key, time.Minute)
		if err != nil {
			t.Fatalf("TryLock(%s) with master 4 held: %v; want masters 0 to 3 to grant it", key, err)
		}
		leases = append(leases, l)
		eventually(t, 5*time.Second, fmt.Sprintf("%d of master 4's workers held at the gate", i+1),
			func() bool { return gate.heldNow() == i+1 })
	}

	l, err := c.TryLock(ctx, "queued", time.Minute)
	returned := time.Now()
	if err != nil {
		t.Fatalf("TryLock(queued) with both of master 4's workers held: %v", err)
	}
	leases = append(leases, l)
	if n := len(c.masters[4].batch.queue); n != 1 {
		t.Fatalf("master 4's queue holds %d calls; want the third lock's call waiting for a worker", n)
	}
	// Its deadline is at most the master timeout after TryLock returned.
	time.Sleep(time.Until(returned.Add(gatedTimeout + 50*time.Millisecond)))
	gate.open()

	marker, err := c.TryLock(ctx, "marker", time.Minute)
	if err != nil {
		t.Fatalf("TryLock(marker) after the gate opened: %v", err)
	}
	leases = append(leases, marker)
	eventually(t, 5*time.Second, "master 4 is sent the marker lock queued after the gate opened",
		func() bool { return gate.sentKey("marker") })
	eventually(t, 5*time.Second, "master 4's queue drained", func() bool { return len(c.masters[4].batch.queue) == 0 })

	if gate.sentKey("queued") {
		t.Fatal("the call that waited past its deadline was sent to master 4")
	}
	if v := r.values(t, "queued"); v[4] != "" || countNonEmpty(v) != 4 {
		t.Fatalf("values of the queued lock per master: %q; want it on masters 0 to 3 only", v)
	}
	for _, key := range []string{"busy:1", "busy:2"} {
		if !gate.sentKey(key) {
			t.Fatalf("the held pipeline of %s was never sent once the gate opened", key)
		}
	}
	for _, l := range leases {
		if err := l.Release(ctx); err != nil {
			t.Fatalf("Release(%s): %v", l.Key(), err)
		}
	}
	for _, key := range []string{"busy:1", "busy:2", "queued", "marker"} {
		gone(t, r.clients, key) // Release returns at a majority; the rest follow
	}
}

// After a restart (SCRIPT FLUSH) a master answers NOSCRIPT, and the call is
// sent again as EVAL; not when its deadline passed while the EVALSHA was
// on its way. Master 4 (fresh: it has no scripts) gets a lock's EVALSHA
// only after the call's deadline, and answers NOSCRIPT: the call ends with
// that error and is not sent again, so master 4 never holds the key.
func TestNoScriptIsNotResentPastTheDeadline(t *testing.T) {
	ctx := context.Background()
	r, gate, c := gatedRig(t)
	if err := r.clients[4].ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}

	l, err := c.TryLock(ctx, "late", time.Minute)
	returned := time.Now()
	if err != nil {
		t.Fatalf("TryLock with master 4 held: %v", err)
	}
	eventually(t, 5*time.Second, "master 4's pipeline held at the gate", func() bool { return gate.heldNow() == 1 })
	time.Sleep(time.Until(returned.Add(gatedTimeout + 50*time.Millisecond))) // its deadline has passed
	gate.open()
	select { // master 4's answer, after the EVAL a NOSCRIPT would bring
	case <-l.acq[4].done:
	case <-time.After(10 * time.Second):
		t.Fatal("master 4's call never settled")
	}
	if !gate.sentAs("evalsha", "late") {
		t.Fatal("the held EVALSHA was never sent")
	}
	if err := l.acq[4].rep.err; !isNoScript(err) {
		t.Fatalf("master 4's answer: %v; want its NOSCRIPT", err)
	}
	if gate.sentAs("eval", "late") {
		t.Fatal("the call was sent again as EVAL after its deadline")
	}
	if v := r.values(t, "late"); v[4] != "" {
		t.Fatalf("master 4 holds the late call's key: %q", v)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
}

// A merged call answered NOSCRIPT is not sent again as EVAL once one of its
// locks is past its deadline, as a lone call is not (merge.go's deadline).
// Six acquires queue for master 4 (fresh: no scripts) behind both of its
// workers, held at the gate; when it opens, a worker takes several of them
// as one merged call, which a second hook holds past their deadlines. The
// master answers NOSCRIPT; each of its locks keeps that error, no EVAL
// follows, and master 4 never holds their keys.
func TestMergedNoScriptIsNotResentPastTheDeadline(t *testing.T) {
	ctx := context.Background()
	r, gate, c := gatedRig(t)
	if err := r.clients[4].ScriptFlush(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	hold := &mergedHold{release: make(chan struct{})}
	r.clients[4].(*redis.Client).AddHook(hold)
	t.Cleanup(hold.open)
	for i, key := range []string{"busy:1", "busy:2"} {
		if _, err := c.TryLock(ctx, key, time.Minute); err != nil {
			t.Fatalf("TryLock(%s) with master 4 held: %v", key, err)
		}
		eventually(t, 5*time.Second, fmt.Sprintf("%d of master 4's workers held at the gate", i+1),
			func() bool { return gate.heldNow() == i+1 })
	}
	leases := map[string]*Lease{}
	for i := range 6 {
		key := fmt.Sprintf("queued:%d", i)
		l, err := c.TryLock(ctx, key, time.Minute)
		if err != nil {
			t.Fatalf("TryLock(%s): %v", key, err)
		}
		leases[key] = l
	}
	returned := time.Now() // every queued call's deadline is before returned + gatedTimeout
	gate.open()
	eventually(t, 5*time.Second, "a merged call held", func() bool { return hold.heldNow() > 0 })
	time.Sleep(time.Until(returned.Add(gatedTimeout + 50*time.Millisecond)))
	hold.open()
	merged := hold.lockKeys()
	if len(merged) < 2 {
		t.Fatalf("merged call of %v", merged)
	}
	for _, key := range merged {
		l := leases[key]
		select {
		case <-l.acq[4].done:
		case <-time.After(10 * time.Second):
			t.Fatalf("%s: master 4's call never settled", key)
		}
		if err := l.acq[4].rep.err; !isNoScript(err) {
			t.Errorf("%s: master 4's answer %v; want its NOSCRIPT", key, err)
		}
		if gate.sentAs("eval", key) {
			t.Errorf("%s: sent again as EVAL after its deadline", key)
		}
		if v := r.values(t, key); v[4] != "" {
			t.Errorf("master 4 holds %s: %q", key, v)
		}
	}
}

// mergedHold is a go-redis hook that holds every pipeline carrying a merged
// acquire until open, and records the locks of those calls.
type mergedHold struct {
	release chan struct{}
	once    sync.Once

	mu    sync.Mutex
	held  int
	locks []string
}

func (h *mergedHold) open() { h.once.Do(func() { close(h.release) }) }

func (h *mergedHold) heldNow() int {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.held
}

func (h *mergedHold) lockKeys() []string {
	h.mu.Lock()
	defer h.mu.Unlock()
	return slices.Clone(h.locks)
}

func (h *mergedHold) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *mergedHold) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *mergedHold) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		var locks []string
		for _, cmd := range cmds {
			if cmd.Name() == "evalsha" && mergerOf(cmd.Args()) == acquireMerge {
				locks = append(locks, lockKeys(acquireMerge, cmd.Args())...)
			}
		}
		if len(locks) == 0 {
			return next(ctx, cmds)
		}
		h.mu.Lock()
		h.held++
		h.locks = append(h.locks, locks...)
		h.mu.Unlock()
		<-h.release
		return next(ctx, cmds)
	}
}
