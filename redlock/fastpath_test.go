package redlock

import (
	"context"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// scriptCounter counts the calls of one script (by SHA, or by source for
// EVAL after NOSCRIPT), direct or pipelined.
type scriptCounter struct {
	sha, src string
	n        atomic.Int64
	// merged, when set, makes it count locks: a call of the script merged
	// calls go as counts one per lock.
	merged *merger
}

// acquireCounter counts the locks acquire calls ask for, lone or merged.
func acquireCounter() *scriptCounter {
	return &scriptCounter{sha: acquireScript.Hash(), src: acquireSrc, merged: acquireMerge}
}

// releaseCounter counts the keys release calls delete, lone or merged.
func releaseCounter() *scriptCounter {
	return &scriptCounter{sha: releaseScript.Hash(), src: releaseSrc, merged: releaseMerge}
}

func (h *scriptCounter) count(cmd redis.Cmder) {
	a := cmd.Args()
	switch {
	case len(a) < 3:
	case h.merged != nil && mergerOf(a) == h.merged:
		h.n.Add(int64(len(lockKeys(h.merged, a))))
	case a[1] == h.sha || a[1] == h.src:
		h.n.Add(1)
	}
}

// mergerOf is the merger whose merged script an EVALSHA or EVAL calls, or
// nil.
func mergerOf(args []any) *merger {
	switch args[1] {
	case acquireManyScript.Hash(), acquireManySrc:
		return acquireMerge
	case releaseScript.Hash(), releaseSrc:
		return releaseMerge
	}
	return nil
}

// lockKeys are the lock keys of an EVALSHA or EVAL of m's merged script.
func lockKeys(m *merger, args []any) []string {
	n := args[2].(int) // newScriptCall's and Script.Eval's key count
	var out []string
	for k := len(m.sharedKeys); k < n; k += len(m.lockKeys) {
		out = append(out, args[3+k].(string))
	}
	return out
}

// The hooks count a call once it ran: not when the master answered
// NOSCRIPT (nothing ran), so its EVAL after is not counted twice.
func (h *scriptCounter) DialHook(next redis.DialHook) redis.DialHook { return next }
func (h *scriptCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		err := next(ctx, cmd)
		h.countRun(cmd)
		return err
	}
}
func (h *scriptCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		err := next(ctx, cmds)
		for _, c := range cmds {
			h.countRun(c)
		}
		return err
	}
}

func (h *scriptCounter) countRun(cmd redis.Cmder) {
	if err := cmd.Err(); err == nil || !isNoScript(err) {
		h.count(cmd)
	}
}

// A client proposes in round 1 the token after the highest it has seen for
// the key (1 for a key it has not seen) and skips the write-back when a
// majority raised its counter to it; when another client took the key in
// between, its proposal is too low and it falls back to the write-back.
// Tokens grow across all of it.
func TestOneRoundFencingWhenTheProposalHolds(t *testing.T) {
	r := newRig(t, 5)
	wb := &scriptCounter{sha: writeBackScript.Hash(), src: writeBackSrc}
	for _, rc := range r.clients {
		rc.AddHook(wb)
	}
	a, b := r.client(t), r.client(t)
	ctx := context.Background()
	var last uint64
	step := func(c *Client, wantWriteBacks int64, what string) {
		t.Helper()
		before := wb.n.Load()
		l, err := c.TryLock(ctx, "k", 5*time.Second)
		if err != nil {
			t.Fatalf("%s: %v", what, err)
		}
		if uint64(l.Token()) <= last {
			t.Fatalf("%s: token %d after %d", what, l.Token(), last)
		}
		last = uint64(l.Token())
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		gone(t, r.clients, "k")
		if got := wb.n.Load() - before; (wantWriteBacks == 0) != (got == 0) {
			t.Fatalf("%s: %d write-back calls, want %d", what, got, wantWriteBacks)
		}
	}
	step(a, 0, "first lock of a key nobody locked: the proposal 1 holds, one round")
	if last != 1 {
		t.Fatalf("first token of a fresh key: %d, want 1", last)
	}
	step(a, 0, "second lock by the same client: its proposal holds, one round")
	step(a, 0, "third lock: one round")
	step(b, 3, "another client: nothing cached, its proposal 1 is below the counters")
	step(a, 3, "the first client again: its proposal is below the counters, write-back")
	step(a, 0, "and then one round again")
}

// Release returns once a majority deleted the key; the deletes to the other
// masters may still be on their way when the same Client locks the key
// again. Those masters count the Client's own released value as free; they
// never do for another client.
func TestRelockAfterReleaseOverwritesOnlyOurOwnStaleKey(t *testing.T) {
	r := newRig(t, 5)
	a, b := r.client(t), r.client(t)
	ctx := context.Background()
	stale := func(c *Client) {
		t.Helper()
		l, err := c.TryLock(ctx, "k", 10*time.Second)
		if err != nil {
			t.Fatal(err)
		}
		eventually(t, 5*time.Second, "key on every master", func() bool { return countNonEmpty(r.values(t, "k")) == 5 })
		old := r.values(t, "k")[0]
		if err := l.Release(ctx); err != nil {
			t.Fatal(err)
		}
		gone(t, r.clients, "k")
		for _, i := range []int{0, 1} { // as if the deletes to 0 and 1 were still on their way
			if err := r.clients[i].Set(ctx, "k", old, 10*time.Second).Err(); err != nil {
				t.Fatal(err)
			}
		}
	}
	pause(t, r, 4) // no all-grant round: 0 and 1 decide
	defer resume(t, r, 4)

	resume(t, r, 4)
	stale(a)
	pause(t, r, 4)
	if _, err := b.TryLock(ctx, "k", 10*time.Second); err == nil {
		t.Fatal("another client overwrote a's released key")
	}
	l, err := a.TryLock(ctx, "k", 10*time.Second)
	if err != nil {
		t.Fatalf("a re-locking its own released key: %v", err)
	}
	_ = l.Release(ctx)
}

// Write-back confirmations count like grants: an uncertified master's ok
// counts only when every master confirmed. Counting it otherwise lets a
// later fast path reuse the token (the spin model's counterexample in
// docs/fencing-model.md). Here master 0 has no certificate and master 2 no
// longer holds the key: two oks, one of them countable, is not a majority.
func TestWriteBackCountsUncertifiedOksOnlyFromEveryMaster(t *testing.T) {
	r := newRig(t, 3)
	c, err := New(r.clients) // quarantine on: confirmations are judged by rule V
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	setCert(t, r.clients[1])
	setCert(t, r.clients[2])
	for i, m := range r.clients {
		v := "ours"
		if i == 2 {
			v = "another owner"
		}
		if err := m.Set(ctx, "k", v, time.Minute).Err(); err != nil {
			t.Fatal(err)
		}
	}
	all := []int{0, 1, 2}
	if wb := c.writeBack(ctx, "k", "ours", all, 7, time.Second, time.Now().Add(time.Minute)); wb.token != 0 {
		t.Fatalf("write-back counted an uncertified master's ok toward a majority: token %d", wb.token)
	}
	setCert(t, r.clients[0])
	if wb := c.writeBack(ctx, "k", "ours", all, 8, time.Second, time.Now().Add(time.Minute)); wb.token != 8 {
		t.Fatalf("write-back with two certified oks of three: token %d, want 8 (%v)", wb.token, wb.errs)
	}
	if err := r.clients[2].Set(ctx, "k", "ours", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	for _, m := range r.clients {
		if err := m.Del(ctx, keys.Cert).Err(); err != nil {
			t.Fatal(err)
		}
	}
	if wb := c.writeBack(ctx, "k", "ours", all, 9, time.Second, time.Now().Add(time.Minute)); wb.token != 9 {
		t.Fatalf("write-back confirmed by every master, none certified: token %d, want 9 (%v)", wb.token, wb.errs)
	}
}
