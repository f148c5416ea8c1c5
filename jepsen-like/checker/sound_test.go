package checker

import (
	"fmt"
	"runtime"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Issue 18 §1: a token-1 write invoked first and completing last, after the
// token-2 and token-3 writes, may have taken effect first: linearizable.
// (The stale-write pre-check walked the writes in completion order and
// called it "accepted after the write with token 2".)
func TestFencedRegisterEarlyInvokedWriteCompletingLast(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":10}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":2,"type":"invoke","f":"write","key":"r","value":"c","token":3,"time_ns":30}`,
		`{"process":2,"type":"ok","f":"write","key":"r","value":"c","token":3,"time_ns":40}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":50}`,
		`{"process":3,"type":"invoke","f":"read","key":"r","token":4,"time_ns":60}`,
		`{"process":3,"type":"ok","f":"read","key":"r","value":"c","token":4,"time_ns":70}`,
	)
	wantVerdict(t, FencedRegister{}.Check(h), Valid, 0)
}

// Issue 18 §1: a write completed with info may have happened; a read that
// saw it is possible. Another read, later, cannot see an older value.
func TestFencedRegisterInfoWriteIsPossiblyDone(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":10}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"info","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":40}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"b","token":3,"time_ns":50}`,
	)
	wantVerdict(t, FencedRegister{}.Check(h), Valid, 0)
	// An invoke never completed is info too.
	open := parse(t,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":40}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"b","token":3,"time_ns":50}`,
	)
	wantVerdict(t, FencedRegister{}.Check(open), Valid, 0)
	// Once the read with token 3 saw "b", a read with token 4 cannot see "a".
	bad := parse(t, append(append([]string(nil),
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":10}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"info","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":40}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"b","token":3,"time_ns":50}`),
		`{"process":3,"type":"invoke","f":"read","key":"r","token":4,"time_ns":60}`,
		`{"process":3,"type":"ok","f":"read","key":"r","value":"a","token":4,"time_ns":70}`)...)
	wantVerdict(t, FencedRegister{}.Check(bad), Invalid, -1)
}

// Issue 18 §1: no "valid" about nothing.
func TestNoVerdictWithoutEvidence(t *testing.T) {
	cases := map[string][]history.Event{
		"empty history": nil,
		"nemesis only":  parse(t, `{"process":-1,"type":"info","f":"nemesis","key":"m0","value":"restart start","time_ns":0}`),
		"no completion": parse(t,
			`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
			`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":1}`),
		"no acquisition": parse(t,
			`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
			`{"process":0,"type":"fail","f":"acquire","key":"k","value":"error: not acquired","time_ns":1}`),
		"register ops of unknown outcome only": parse(t,
			`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
			`{"process":0,"type":"info","f":"write","key":"r","value":"a","token":1,"time_ns":1}`),
		"every token 0": parse(t,
			`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
			`{"process":0,"type":"ok","f":"acquire","key":"k","time_ns":10,"valid_until_ns":1000}`,
			`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":100}`,
			`{"process":0,"type":"ok","f":"release","key":"k","time_ns":110}`),
	}
	for name, h := range cases {
		t.Run(name, func(t *testing.T) {
			rs := Run(h)
			if v := Overall(rs); v != Unknown || ExitCode(v) != 2 {
				t.Fatalf("verdict %s, want unknown: %v", v, rs)
			}
		})
	}
}

// The stats checker: a requested fault that never fired, or fencing on with
// no token, leaves the verdict unknown.
func TestStatsNeedsEvidence(t *testing.T) {
	h := parse(t,
		`{"process":-1,"type":"info","f":"nemesis","value":"restart skipped (no hold)","time_ns":0}`,
		`{"process":-1,"type":"info","f":"nemesis","key":"m1","value":"pause start","time_ns":1}`,
		`{"process":-1,"type":"info","f":"nemesis","key":"m1","value":"pause stop","time_ns":2}`,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":3}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","time_ns":10,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Stats{Faults: []string{"pause", "restart"}}.Check(h), Unknown, 0)
	wantVerdict(t, Stats{Faults: []string{"pause"}, Fencing: true}.Check(h), Unknown, 0)
	wantVerdict(t, Stats{Faults: []string{"pause"}}.Check(h), Valid, 0)
	wantVerdict(t, Stats{Fencing: true}.Check(parse(t, sequential...)), Valid, 0)
}

// Issue 18 §1: limits 2, 2, 3 on three overlapping holds of one semaphore
// are a finding (only the newest limit was used), and so is a lock held on
// a semaphore's key; a lock hold overlapping a permit is a mutex violation.
func TestSemaphoreMixedLimitsAndLocks(t *testing.T) {
	mixed := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":30,"valid_until_ns":1000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"s","value":"limit=3","time_ns":40}`,
		`{"process":2,"type":"ok","f":"acquire","key":"s","value":"limit=3","time_ns":50,"valid_until_ns":1000}`,
	)
	r := Semaphore{}.Check(mixed)
	wantVerdict(t, r, Invalid, 2)
	if !strings.Contains(r.Explanation, "limit 2, limit 3") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	both := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"s","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"s","token":1,"time_ns":30,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Semaphore{}.Check(both), Invalid, 2)
	wantVerdict(t, Mutex{}.Check(both), Invalid, 2)
}

// Issue 18 §1: events with equal time_ns are ordered by index. A release
// invoked after the next holder's ok, at the same nanosecond, is an overlap.
func TestEqualTimesOrderedByIndex(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":100,"valid_until_ns":1100}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":100}`,
		`{"process":0,"type":"ok","f":"release","key":"k","time_ns":110}`,
	)
	wantVerdict(t, Mutex{}.Check(h), Invalid, 3)
	// The other way round, release first, is no overlap.
	ok := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":100}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":100,"valid_until_ns":1100}`,
		`{"process":0,"type":"ok","f":"release","key":"k","time_ns":110}`,
	)
	wantVerdict(t, Mutex{}.Check(ok), Valid, 0)
	// Porcupine sees the order of indices too: a read invoked after a
	// write returned, at the same nanosecond, must see it.
	reg := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":10}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":30}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"a","token":3,"time_ns":40}`,
	)
	wantVerdict(t, FencedRegister{}.Check(reg), Invalid, -1)
}

// registerHistory writes a register history of about n events: holders
// with growing tokens each read the last value and write their own; every
// fifth holder's write overlaps the next holder's read and write. With
// staleAt ≥ 0, the read of holder staleAt returns an older value.
func registerHistory(n, writers, staleAt int) []history.Event {
	var evs []history.Event
	add := func(p int, typ history.Type, f history.F, tok uint64, v string) {
		evs = append(evs, history.Event{Index: len(evs), Process: p, Type: typ, F: f, Key: "r", Token: tok, Value: v, TimeNS: int64(len(evs)) * 1000})
	}
	last, prev := "", ""
	for h := 0; len(evs) < n; h++ {
		p, tok := h%writers, uint64(h+1)
		seen := last
		if h == staleAt {
			seen = prev
		}
		add(p, history.Invoke, history.Read, tok, "")
		add(p, history.OK, history.Read, tok, seen)
		v := fmt.Sprintf("p%d-w%d", p, h)
		add(p, history.Invoke, history.Write, tok, v)
		if h%5 == 0 && h > 0 { // the next holder starts before this write returns
			q, tok2 := (h+1)%writers, tok+1
			add(q, history.Invoke, history.Read, tok2, "")
			add(p, history.OK, history.Write, tok, v)
			add(q, history.OK, history.Read, tok2, v)
			v2 := fmt.Sprintf("p%d-w%d", q, h+1)
			add(q, history.Invoke, history.Write, tok2, v2)
			add(q, history.OK, history.Write, tok2, v2)
			prev, last = v, v2
			h++
			continue
		}
		add(p, history.OK, history.Write, tok, v)
		prev, last = last, v
	}
	return evs
}

// Issue 18 §1: the proof of a bad read at #27 of 4,000 events is the window
// around it, not the end of the history.
func TestFencedRegisterProofIsTheFailingWindow(t *testing.T) {
	h := registerHistory(4000, 4, 7)
	if err := history.Validate(h); err != nil {
		t.Fatal(err)
	}
	r := FencedRegister{}.Check(h)
	wantVerdict(t, r, Invalid, -1)
	bad := -1
	for _, e := range h {
		if e.F == history.Read && e.Type == history.OK && e.Token == 8 {
			bad = e.Index
		}
	}
	if len(r.Ops) == 0 || len(r.Ops) > 2*maxProof {
		t.Fatalf("%d proof events: %v", len(r.Ops), r.Ops)
	}
	found := false
	for _, e := range r.Ops {
		if e.Index > bad+10 {
			t.Fatalf("proof event %v is far past the bad read #%d: %v", e, bad, r.Ops)
		}
		found = found || e.Index == bad
	}
	if !found || !strings.Contains(r.Explanation, fmt.Sprintf("#%d", bad)) {
		t.Fatalf("the bad read #%d is not in the proof: %s %v", bad, r.Explanation, r.Ops)
	}
	t.Log(r.Explanation)
}

// Issue 18 §1: 100k events with 4 writers and one stale read near the end
// took 2.7 GB; windows bound the memory by the largest window.
func TestFencedRegisterMemoryIsBounded(t *testing.T) {
	h := registerHistory(100_000, 4, 24_000)
	var before, after runtime.MemStats
	runtime.GC()
	runtime.ReadMemStats(&before)
	r := FencedRegister{}.Check(h)
	runtime.ReadMemStats(&after)
	wantVerdict(t, r, Invalid, -1)
	const limit = 256 << 20
	if alloc := after.TotalAlloc - before.TotalAlloc; alloc > limit {
		t.Fatalf("checking %d events allocated %d MB, want at most %d MB", len(h), alloc>>20, limit>>20)
	} else {
		t.Logf("%d events: %d MB allocated; %s", len(h), alloc>>20, r.Explanation)
	}
}
