package redlock

import (
	"bufio"
	"context"
	"net"
	"strings"
	"testing"
	"time"

	"github.com/cenkalti/backoff/v4"
)

// The release of a lease of this Client hands its deletes to the head of
// the key's line parked for it, which sends its acquire behind each delete
// in one pipeline (handoff.go): with every master paused after the head
// parked, each master gets the head's acquire while the release's delete is
// still unanswered (so before any PUBLISH could wake the head), on the
// delete's connection right behind it (MONITOR, after the resume), and the
// handed-off attempt wins: the head's Lock makes two attempts, the refused
// one that parked it and the hand-off.
func TestReleaseSendsTheNextHeadsAcquireBehindItsDelete(t *testing.T) {
	const key = "handed"
	r := newRig(t, 5, withRedisOptions(patientClients))
	events := make(chan Event, 16)
	// A long backoff: the head retries only when woken or handed off.
	slow := func() backoff.BackOff { return backoff.NewConstantBackOff(time.Minute) }
	c := r.client(t, WithMasterTimeout(30*time.Second), WithRetry(slow), WithObserver(ObserverFunc(func(_ context.Context, e Event) {
		if e.Op == OpAcquire && e.Key == key {
			events <- e
		}
	})))
	ctx := context.Background()
	warm, err := c.Lock(ctx, "warm", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	if err := warm.Release(ctx); err != nil {
		t.Fatal(err)
	}
	first, err := c.Lock(ctx, key, time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	<-events
	idle := func() bool {
		for _, m := range c.masters {
			if len(m.slots) > 0 {
				return false
			}
		}
		return true
	}
	eventually(t, 10*time.Second, "every answer of the first Lock in", idle)
	resetCommandStats(t, r)
	type result struct {
		l   *Lease
		err error
	}
	next := make(chan result, 1)
	go func() {
		l, err := c.Lock(ctx, key, time.Minute)
		next <- result{l, err}
	}()
	// Its first attempt was refused by every master (and answered by all),
	// and it is ready for a hand-off, parked during or after that attempt:
	// either way its next acquire goes behind the release's deletes.
	eventually(t, 10*time.Second, "the second Lock refused and parked for a hand-off", func() bool {
		for _, n := range commandCalls(t, r, "evalsha") {
			if n < 1 {
				return false
			}
		}
		c.handoffs.mu.Lock()
		parked := c.handoffs.parked[key] != nil
		c.handoffs.mu.Unlock()
		return parked && idle()
	})

	mons := make([]chan string, len(r.Servers))
	for i, s := range r.Servers {
		mons[i] = monitor(t, s.Addr)
	}
	// The per-master timeout (30 s) outlasts the wait below: no round
	// expires, and no cleanup takes a slot, while the masters are paused.
	all := []int{0, 1, 2, 3, 4}
	pause(t, r, all...)
	released := make(chan error, 1)
	go func() { released <- first.Release(ctx) }()
	eventually(t, 5*time.Second, "the head's acquire in flight beside the unanswered delete on every master", func() bool {
		for _, m := range c.masters {
			if len(m.slots) < 2 {
				return false
			}
		}
		return true
	})
	resume(t, r, all...)

	var res result
	select {
	case res = <-next:
	case <-time.After(20 * time.Second):
		t.Fatal("the second Lock did not return")
	}
	if res.err != nil {
		t.Fatal(res.err)
	}
	if err := <-released; err != nil {
		t.Fatal(err)
	}
	if e := <-events; e.Attempts != 2 {
		t.Errorf("the handed-off Lock made %d attempts, want 2 (the refusal that parked it, the hand-off): %+v", e.Attempts, e)
	}
	if err := res.l.Release(ctx); err != nil {
		t.Fatal(err)
	}

	// On each master: the first release of the key, and the acquire after it,
	// came on one connection (MONITOR names the client's address).
	for i, mon := range mons {
		var relFrom, acqFrom string
		deadline := time.After(10 * time.Second)
		for acqFrom == "" {
			var line string
			select {
			case line = <-mon:
				if line == "" {
					t.Fatalf("master %d: MONITOR ended", i)
				}
			case <-deadline:
				t.Fatalf("master %d: no release then acquire of %q seen (release from %q)", i, key, relFrom)
			}
			if !strings.Contains(line, `"`+key+`"`) {
				continue
			}
			switch {
			case relFrom == "" && strings.Contains(line, releaseScript.Hash()):
				relFrom = monitorClient(line)
			case relFrom != "" && (strings.Contains(line, acquireScript.Hash()) || strings.Contains(line, acquireManyScript.Hash())):
				acqFrom = monitorClient(line)
			}
		}
		if relFrom != acqFrom {
			t.Errorf("master %d: the release came from %s, the next acquire from %s; want one connection", i, relFrom, acqFrom)
		}
	}
}

// monitor sends MONITOR to the server at addr on a connection of its own
// and returns its lines (go-redis's MonitorCmd hands its connection back to
// the pool while it reads).
func monitor(t *testing.T, addr string) chan string {
	t.Helper()
	conn, err := net.Dial("tcp", addr)
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = conn.Close() })
	if _, err := conn.Write([]byte("MONITOR\r\n")); err != nil {
		t.Fatal(err)
	}
	rd := bufio.NewReader(conn)
	if line, err := rd.ReadString('\n'); err != nil || !strings.HasPrefix(line, "+OK") {
		t.Fatalf("MONITOR: %q, %v", line, err)
	}
	lines := make(chan string, 4096)
	go func() {
		defer close(lines)
		for {
			line, err := rd.ReadString('\n')
			if err != nil {
				return
			}
			select {
			case lines <- line:
			default: // the test reads only the start
			}
		}
	}()
	return lines
}

// monitorClient is the client address of a MONITOR line
// (`1700000000.000000 [0 127.0.0.1:5555] "evalsha" ...`).
func monitorClient(line string) string {
	_, rest, _ := strings.Cut(line, "[")
	db, _, _ := strings.Cut(rest, "]")
	_, addr, _ := strings.Cut(db, " ")
	return addr
}
