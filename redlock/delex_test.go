package redlock

import (
	"context"
	"errors"
	"slices"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// delexCounter is a go-redis hook that counts DELEX commands.
type delexCounter struct{ n atomic.Int64 }

func (d *delexCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (d *delexCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		d.count(cmd)
		return next(ctx, cmd)
	}
}

func (d *delexCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			d.count(c)
		}
		return next(ctx, cmds)
	}
}

func (d *delexCounter) count(cmd redis.Cmder) {
	if cmd.Name() == "delex" {
		d.n.Add(1)
	}
}

// Debian's Redis 7.0.15 has no DELEX; miniredis v2.40 has DELEX IFEQ. On
// masters that have it, releases go through DELEX, stay owner-checked, and
// still wake waiters.
func TestReleaseUsesDELEXWhereAMasterHasIt(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	var hook delexCounter
	for _, rc := range cs {
		rc.(*redis.Client).AddHook(&hook)
	}
	c := miniClient(t, cs)
	for _, m := range c.masters {
		m.setDELEX(true) // what a probe reports for Redis ≥ 8.4
	}
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	ms[0].Set("k", "someone-else") // another owner's key: the delete must keep it
	if err := lease.Release(ctx); err != nil {
		t.Fatalf("Release through DELEX with 2 of 3 still ours: %v", err)
	}
	if hook.n.Load() == 0 {
		t.Fatal("DELEX was never sent")
	}
	if v, _ := ms[0].Get("k"); v != "someone-else" {
		t.Fatalf("another owner's key was deleted: %q", v)
	}
	for i, m := range ms[1:] {
		if m.Exists("k") {
			t.Fatalf("master %d kept the released key", i+1)
		}
	}
}

// A master wrongly believed to have DELEX (here: real redis-server 7.0.15)
// refuses it; the client then uses the script for it, and cleanup finishes
// the job.
func TestDELEXRefusedFallsBackToTheScript(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	for _, m := range c.masters {
		m.setDELEX(true)
	}
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); !errors.Is(err, ErrNoQuorum) {
		t.Fatalf("Release with DELEX refused everywhere: %v; want ErrNoQuorum", err)
	}
	// Release returns once quorum is out of reach; the last refusal may come later.
	eventually(t, 5*time.Second, "every master that refused DELEX is back on the script", func() bool {
		for _, m := range c.masters {
			if m.delex.Load() != delexNo {
				return false
			}
		}
		return true
	})
	eventually(t, 5*time.Second, "the cleaners removed the keys with the script", func() bool {
		return countNonEmpty(r.values(t, "k")) == 0
	})
}

func TestDELEXDetectedOnRealServers(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	ctx := context.Background()
	lease, err := c.TryLock(ctx, "k", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := lease.Release(ctx); err != nil { // starts the detection
		t.Fatal(err)
	}
	eventually(t, 5*time.Second, "DELEX detected as missing on redis-server 7.0", func() bool {
		for _, m := range c.masters {
			if m.delex.Load() != delexNo {
				return false
			}
		}
		return true
	})
}

// On DELEX masters too, a release's delete to a master whose SET is still
// out waits for the SET's answer: sent at once, it would run first, find
// nothing, and the SET would leave the key behind.
func TestDELEXWaitsForTheLastSET(t *testing.T) {
	mr, slow := releaseBehindASlowDELEXMaster(t, "behind", 300*time.Millisecond)
	eventually(t, 5*time.Second, "master 2's DELEX sent", func() bool {
		deletes, _ := slow.counts()
		return deletes == 1
	})
	if _, overtaking := slow.counts(); overtaking != 0 {
		t.Fatalf("master 2's DELEX was sent while its acquire was out")
	}
	if mr.mini[2].Exists("behind") {
		t.Fatal("master 2 kept the released key")
	}
}

// A DELEX that waits its whole per-master timeout for the SET is not sent
// (errSetStillOut); the release still succeeds on the others, and master 2
// is left to the background check, its SET's fate being open: no key is
// left anywhere.
func TestDELEXGivesUpWaitingForTheSET(t *testing.T) {
	mr, slow := releaseBehindASlowDELEXMaster(t, "stuck", 1500*time.Millisecond) // past the per-master timeout of 1 s
	slow.armed.Store(false)
	eventually(t, 10*time.Second, "the key gone from every master", func() bool {
		for _, m := range mr.mini {
			if m.Exists("stuck") {
				return false
			}
		}
		return true
	})
}

// releaseBehindASlowDELEXMaster locks key on three miniredis masters that
// have DELEX, with master 2's acquires held back for delay by its hook, and
// releases it at once (both must succeed, by the other two).
func releaseBehindASlowDELEXMaster(t *testing.T, key string, delay time.Duration) (*rig, *overtakeHook) {
	t.Helper()
	mr := newRig(t, 3, onMiniredis())
	slow := &overtakeHook{delay: delay}
	mr.clients[2].AddHook(slow)
	c := miniClient(t, mr.clients) // per-master timeout 1 s
	for _, m := range c.masters {
		m.setDELEX(true)
	}
	slow.armed.Store(true)
	lockAndRelease(t, c, key, 5*time.Second)
	return mr, slow
}

// The cleaner's batches answer each key apart on DELEX masters too, as with
// release.lua (TestCleanerBatchSettlesAroundAKeyOfAnotherType): a key of
// another type reads as another owner's, and the batch's other keys keep
// their answers.
func TestReleaseEachAnswersEachKeyWithDELEX(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	c := miniClient(t, mr.clients)
	m := c.masters[0]
	m.setDELEX(true)
	mini := mr.mini[0]
	if err := mini.Set("k1", "ours"); err != nil {
		t.Fatal(err)
	}
	if _, err := mini.Lpush("k2", "another program's"); err != nil {
		t.Fatal(err)
	}
	if err := mini.Set("k3", "theirs"); err != nil {
		t.Fatal(err)
	}
	keys := []string{"k1", "k2", "k3", "k4"}
	rq := releaseEach(m, keys, []string{"ours", "ours", "ours", "ours"})
	if rq.run == nil {
		t.Fatal("releaseEach on a DELEX master does not use DELEX")
	}
	got, err := rq.run(context.Background(), m)
	if err != nil {
		t.Fatal(err)
	}
	if want := []int64{1, -1, -1, 0}; !slices.Equal(got, want) {
		t.Fatalf("releaseEach answered %v; want %v (deleted, another type, another owner's, not there)", got, want)
	}
	if mini.Exists("k1") || !mini.Exists("k2") || !mini.Exists("k3") {
		t.Fatalf("after releaseEach: k1 %v, k2 %v, k3 %v; want only k1 gone", mini.Exists("k1"), mini.Exists("k2"), mini.Exists("k3"))
	}
}
