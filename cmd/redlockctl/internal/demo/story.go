package demo

import (
	"context"
	"fmt"
	"strconv"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

// Keys of the single-instance steps (on master 0 only).
const (
	raceKey   = "demo:counter"
	naiveKey  = "lock:naive"
	windowKey = "lock:report"
)

// say prints narration lines, indented under the step's title.
func (d *demo) say(format string, args ...any) {
	fmt.Fprintf(d.out, "   "+format+"\n", args...)
}

// race is the check-then-act race without a lock: every worker reads the
// counter, then writes what it read plus one.
func (d *demo) race(ctx context.Context, rdb redis.UniversalClient) {
	fmt.Fprintln(d.out, "1. No lock: read-modify-write races")
	workers, rounds := d.cfg.Processes*d.cfg.Workers, d.cfg.Increments
	if err := rdb.Set(ctx, raceKey, 0, 0).Err(); err != nil {
		d.check(false, "set %s: %v", raceKey, err)
		return
	}
	var errs []error
	var mu sync.Mutex
	for range rounds {
		// Every worker reads before any writes (the demo lines the reads up so
		// that the race shows every time; under load it shows by itself).
		read := make(chan struct{})
		var reads, writes sync.WaitGroup
		for range workers {
			reads.Add(1)
			writes.Go(func() {
				v, err := rdb.Get(ctx, raceKey).Int()
				reads.Done()
				<-read
				if err == nil {
					err = rdb.Set(ctx, raceKey, v+1, 0).Err()
				}
				if err != nil {
					mu.Lock()
					errs = append(errs, err)
					mu.Unlock()
				}
			})
		}
		reads.Wait()
		close(read)
		writes.Wait()
	}
	got, err := rdb.Get(ctx, raceKey).Int()
	want := workers * rounds
	d.say("%d workers each did GET %s, then SET it to what they read + 1, %d times: %d increments.", workers, raceKey, rounds, want)
	d.say("why: increments that read the same value write the same value; all but one are lost.")
	d.check(err == nil && len(errs) == 0 && got == rounds && want-got == (workers-1)*rounds,
		"the counter is %d, not %d: %d lost updates (a lock is needed)", got, want, want-got)
}

// naive is the single-instance SETNX lock whose holder crashes.
func (d *demo) naive(ctx context.Context, rdb redis.UniversalClient) {
	fmt.Fprintln(d.out, "2. A naive lock: SETNX, and DEL when done")
	a, errA := rdb.SetNX(ctx, naiveKey, "holder-A", 0).Result()
	d.say("holder A: SETNX %s -> %v; then A crashes before its DEL.", naiveKey, a)
	d.ms.servers[0].FastForward(24 * time.Hour)
	b, errB := rdb.SetNX(ctx, naiveKey, "holder-B", 0).Result()
	ttl := rdb.PTTL(ctx, naiveKey).Val()
	d.say("a day later, holder B: SETNX %s -> %v (the key's TTL: %v).", naiveKey, b, ttlText(ttl))
	d.say("why: the key has no TTL, and only its holder ever deletes it: the lock is stuck until an operator steps in.")
	d.check(errA == nil && errB == nil && a && !b && ttl == -1, "B is still locked out a day after A crashed")
}

// window is SETNX followed by EXPIRE, with a crash in between; audit finds
// the key; SET NX PX closes the window.
func (d *demo) window(ctx context.Context, rdb redis.UniversalClient) {
	fmt.Fprintln(d.out, "3. SETNX then EXPIRE: the crash window")
	ok, err := rdb.SetNX(ctx, windowKey, "holder-C", 0).Result()
	d.say("holder C: SETNX %s -> %v, then crashes before EXPIRE %s 30: the key has no TTL.", windowKey, ok, windowKey)
	cs := d.ms.clients()
	rep, aerr := inspect.Audit(ctx, cs, d.ms.names(), inspect.AuditOptions{})
	_ = closeClients(cs)
	found := false
	for _, f := range rep.Findings {
		if f.Kind == inspect.KindNoTTL && f.Key == windowKey {
			found = true
			d.say("redlockctl audit: %s %s", f.Severity, f.Message)
		}
	}
	d.check(err == nil && aerr == nil && found, "`redlockctl audit` finds %s without a TTL (a guess by its name and value: --fix-ttl gives a TTL only to proven quorumlock lock keys)", windowKey)

	_ = rdb.Del(ctx, windowKey, naiveKey).Err()
	ttl := 2 * time.Second
	set, err := rdb.SetArgs(ctx, windowKey, "holder-D", redis.SetArgs{Mode: "NX", TTL: ttl}).Result()
	d.say("the fix: SET %s <random value> NX PX %d, one atomic command (what Redlock sends to each master): -> %s", windowKey, ttl.Milliseconds(), set)
	d.ms.servers[0].FastForward(ttl)
	left := rdb.Exists(ctx, windowKey).Val()
	d.say("why: the key and its TTL are written together; a holder that crashes leaves a lock that expires.")
	d.check(err == nil && set == "OK" && left == 0, "after the TTL, a crashed holder's SET NX PX lock is gone by itself")
}

func ttlText(d time.Duration) string {
	switch d {
	case -1:
		return "none"
	case -2:
		return "gone"
	}
	return d.String()
}

// names labels the embedded masters for audit's report.
func (ms *masters) names() []string {
	out := make([]string, len(ms.servers))
	for i, s := range ms.servers {
		out[i] = "embedded:" + strconv.Itoa(i) + "@" + s.Addr()
	}
	return out
}
