package semaphore

import (
	"context"
	"errors"
	"fmt"
	"net"
	"strings"
	"sync"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// cmdLog records, per master, the commands a go-redis client sends.
type cmdLog struct {
	mu   sync.Mutex
	cmds map[int][]string
}

type cmdHook struct {
	log    *cmdLog
	master int
}

func (h cmdHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h cmdHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.log.add(h.master, cmd)
		return next(ctx, cmd)
	}
}

func (h cmdHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			h.log.add(h.master, c)
		}
		return next(ctx, cmds)
	}
}

// add records scripts: "survey" for the free-slots script, "script" for
// any other (redlock's acquire, write-back, release). Connection set-up and
// redlock's one-off COMMAND INFO are not round trips of an attempt.
func (l *cmdLog) add(master int, cmd redis.Cmder) {
	name := strings.ToLower(cmd.Name())
	if name != "evalsha" && name != "eval" {
		return
	}
	name = "script"
	if args := cmd.Args(); len(args) > 1 && (args[1] == freeScript.Hash() || args[1] == freeSrc) {
		name = "survey"
	}
	l.mu.Lock()
	defer l.mu.Unlock()
	l.cmds[master] = append(l.cmds[master], name)
}

func (l *cmdLog) reset() map[int][]string {
	l.mu.Lock()
	defer l.mu.Unlock()
	out := l.cmds
	l.cmds = map[int][]string{}
	return out
}

// Theorem 2 of docs/semaphores.md, counted on the wire: on a full
// five-master semaphore, TryAcquire learns ErrBusy from one survey script
// per master; when its survey is stale (the last slot is taken between the
// survey and its lock), from one more script per master (the SET round),
// with no fencing write-back.
func TestBusyWithinTwoRoundTrips(t *testing.T) {
	c, m := realMasters(t, 5)
	holders := newSem(t, m, "rtt", 3)
	log := &cmdLog{cmds: map[int][]string{}}
	hooked := c.Clients(t)
	for i, rdb := range hooked {
		rdb.AddHook(cmdHook{log: log, master: i})
	}
	probe := newSem(t, hooked, "rtt", 3)

	ps := mustAcquire(t, holders, 2)
	defer func() { releaseAll(t, ps) }()
	// Warm the probe's script cache path and connections: one attempt that
	// succeeds, then released.
	warm := mustAcquire(t, probe, 1)
	releaseAll(t, warm)
	on := func(slot int) (n int) { // masters holding slot's key
		for _, rdb := range m {
			if k, _ := rdb.Exists(context.Background(), slotKey("rtt", slot)).Result(); k == 1 {
				n++
			}
		}
		return n
	}
	// Release returns after a majority; let its tail reach every master.
	waitFor(t, "the warm-up release on every master", func() bool { return on(warm[0].Slot()) == 0 })

	// Stale survey: the last slot is taken between the probe's survey and
	// its lock, and (so that no master can grant the probe's SET) placed on
	// every master before the probe goes on.
	probe.midAcquire = func() {
		p := mustAcquire(t, holders, 1)[0]
		ps = append(ps, p)
		waitFor(t, "the last slot on every master", func() bool { return on(p.Slot()) == len(m) })
	}
	log.reset()
	_, err := probe.TryAcquire(ctxFor(t, 5*time.Second))
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("TryAcquire with a stale survey: %v, want ErrBusy", err)
	}
	// redlock returns once a majority refused; its SET still goes to every
	// master. Wait until all have been sent it, then look at everything.
	waitFor(t, "the SET round to reach every master", func() bool {
		log.mu.Lock()
		defer log.mu.Unlock()
		for i := range hooked {
			if len(log.cmds[i]) < 2 {
				return false
			}
		}
		return true
	})
	sent := log.reset()
	for i := range hooked {
		if got := fmt.Sprint(sent[i]); got != "[survey script]" {
			t.Errorf("stale survey: master %d was sent %s, want [survey script] (two round trips, no write-back)", i, got)
		}
	}

	// Full: the survey alone decides.
	probe.midAcquire = nil
	_, err = probe.TryAcquire(ctxFor(t, 5*time.Second))
	sent = log.reset()
	if !errors.Is(err, ErrBusy) {
		t.Fatalf("TryAcquire on a full semaphore: %v, want ErrBusy", err)
	}
	for i := range hooked {
		if got := fmt.Sprint(sent[i]); got != "[survey]" {
			t.Errorf("full: master %d was sent %s, want [survey] (one round trip)", i, got)
		}
	}
}
