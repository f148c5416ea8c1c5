package checker

import (
	"strconv"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// parse reads a hand-written history: JSON lines with the index filled in.
func parse(t *testing.T, lines ...string) []history.Event {
	t.Helper()
	var b strings.Builder
	for i, l := range lines {
		b.WriteString(`{"index":` + itoa(i) + `,` + strings.TrimPrefix(l, "{") + "\n")
	}
	events, err := history.Decode(strings.NewReader(b.String()))
	if err != nil {
		t.Fatal(err)
	}
	return events
}

func itoa(i int) string { return strconv.Itoa(i) }

func wantVerdict(t *testing.T, r Result, v Verdict, proofLen int) {
	t.Helper()
	if r.Verdict != v {
		t.Fatalf("%s: verdict %s, want %s: %s", r.Checker, r.Verdict, v, r.Explanation)
	}
	if proofLen >= 0 && len(r.Ops) != proofLen {
		t.Fatalf("%s: %d proof events %v, want %d", r.Checker, len(r.Ops), r.Ops, proofLen)
	}
}

// Two holders one after the other: valid for every checker.
var sequential = []string{
	`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
	`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
	`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
	`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":100}`,
	`{"process":0,"type":"ok","f":"release","key":"k","time_ns":110}`,
	`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":120,"valid_until_ns":1100}`,
	`{"process":1,"type":"invoke","f":"release","key":"k","time_ns":200}`,
	`{"process":1,"type":"ok","f":"release","key":"k","time_ns":210}`,
}

func TestMutexValid(t *testing.T) {
	wantVerdict(t, Mutex{}.Check(parse(t, sequential...)), Valid, 0)
	wantVerdict(t, Tokens{}.Check(parse(t, sequential...)), Valid, 0)
}

func TestMutexInvalidOverlap(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":-1,"type":"info","f":"nemesis","key":"m0","value":"restart start","time_ns":20}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":30}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":40,"valid_until_ns":1040}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":500}`,
		`{"process":0,"type":"fail","f":"release","key":"k","time_ns":510}`,
	)
	r := Mutex{}.Check(h)
	wantVerdict(t, r, Invalid, 3) // 0's ok and release invoke, 1's ok
	if r.Ops[0].Index != 1 || r.Ops[1].Index != 4 {
		t.Fatalf("proof %v", r.Ops)
	}
	// The tokens checker only compares holds that did not overlap.
	wantVerdict(t, Tokens{}.Check(h), Valid, 0)
}

// A hold ends at valid_until_ns even without a release: a later holder after
// that is no overlap, one before it is.
func TestMutexHoldEndsAtValidity(t *testing.T) {
	after := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":100}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":30}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":100,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Mutex{}.Check(after), Valid, 0)
	before := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":100}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":30}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":99,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Mutex{}.Check(before), Invalid, 2)
	// Different keys never conflict.
	other := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"a","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"a","time_ns":10,"valid_until_ns":100}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"b","time_ns":30}`,
		`{"process":1,"type":"ok","f":"acquire","key":"b","time_ns":40,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Mutex{}.Check(other), Valid, 0)
}

func TestTokensInvalid(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":5,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":100}`,
		`{"process":0,"type":"ok","f":"release","key":"k","time_ns":110}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":120}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":5,"time_ns":130,"valid_until_ns":1000}`,
	)
	r := Tokens{}.Check(h)
	wantVerdict(t, r, Invalid, 3)
	if !strings.Contains(r.Explanation, "token 5") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	wantVerdict(t, Mutex{}.Check(h), Valid, 0)
}

func TestTokensWithoutTokens(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","time_ns":10,"valid_until_ns":1000}`,
	)
	r := Tokens{}.Check(h)
	wantVerdict(t, r, Unknown, 0)
	if !strings.Contains(r.Explanation, "no lock hold") {
		t.Fatalf("explanation %q", r.Explanation)
	}
}

func TestSemaphore(t *testing.T) {
	three := []string{
		`{"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":30,"valid_until_ns":1000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":40}`,
	}
	valid := parse(t, append(append([]string(nil), three...),
		`{"process":0,"type":"invoke","f":"release","key":"s","time_ns":45}`,
		`{"process":0,"type":"ok","f":"release","key":"s","time_ns":46}`,
		`{"process":2,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":50,"valid_until_ns":1000}`)...)
	wantVerdict(t, Semaphore{}.Check(valid), Valid, 0)
	// Two holders of a semaphore with limit 2 are no mutex violation, and
	// no lock was held.
	wantVerdict(t, Mutex{}.Check(valid), Unknown, 0)
	invalid := parse(t, append(append([]string(nil), three...),
		`{"process":2,"type":"ok","f":"acquire","key":"s","value":"limit=2","time_ns":50,"valid_until_ns":1000}`)...)
	wantVerdict(t, Semaphore{}.Check(invalid), Invalid, 3)
	wantVerdict(t, Semaphore{}.Check(parse(t, sequential...)), Unknown, 0)
}

func TestFencedRegisterValid(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":10}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		// The stale holder's write is rejected: fine.
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"late","token":1,"time_ns":40}`,
		`{"process":0,"type":"fail","f":"write","key":"r","value":"late","token":1,"time_ns":50}`,
		`{"process":1,"type":"invoke","f":"read","key":"r","token":2,"time_ns":60}`,
		`{"process":1,"type":"ok","f":"read","key":"r","value":"b","token":2,"time_ns":70}`,
	)
	wantVerdict(t, FencedRegister{}.Check(h), Valid, 0)
}

func TestFencedRegisterStaleWriteAccepted(t *testing.T) {
	h := parse(t,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"late","token":1,"time_ns":40}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"late","token":1,"time_ns":50}`,
	)
	r := FencedRegister{}.Check(h)
	wantVerdict(t, r, Invalid, 4)
	if !strings.Contains(r.Explanation, "token 1") {
		t.Fatalf("explanation %q", r.Explanation)
	}
}

// A read that returns a value nobody wrote last is caught by porcupine, not
// by the stale-write check.
func TestFencedRegisterNotLinearizable(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":10}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":20}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":40}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"a","token":3,"time_ns":50}`,
	)
	r := FencedRegister{}.Check(h)
	wantVerdict(t, r, Invalid, -1)
	if !strings.Contains(r.Explanation, "linearizable") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	// Concurrent writes may take effect in either order.
	conc := parse(t,
		`{"process":0,"type":"invoke","f":"write","key":"r","value":"a","token":1,"time_ns":0}`,
		`{"process":1,"type":"invoke","f":"write","key":"r","value":"b","token":2,"time_ns":1}`,
		`{"process":1,"type":"ok","f":"write","key":"r","value":"b","token":2,"time_ns":30}`,
		`{"process":0,"type":"ok","f":"write","key":"r","value":"a","token":1,"time_ns":31}`,
		`{"process":2,"type":"invoke","f":"read","key":"r","token":3,"time_ns":40}`,
		`{"process":2,"type":"ok","f":"read","key":"r","value":"b","token":3,"time_ns":50}`,
	)
	wantVerdict(t, FencedRegister{}.Check(conc), Valid, 0)
}

func TestOverallAndExitCodes(t *testing.T) {
	rs := []Result{{Verdict: Valid}, {Verdict: Unknown}}
	if Overall(rs) != Unknown || ExitCode(Overall(rs)) != 2 {
		t.Fatal("valid+unknown must be unknown (exit 2)")
	}
	rs = append(rs, Result{Verdict: Invalid})
	if Overall(rs) != Invalid || ExitCode(Invalid) != 1 || ExitCode(Valid) != 0 {
		t.Fatal("any invalid must be invalid (exit 1)")
	}
	// A lock history gets the lock's checkers only.
	if got := Run(parse(t, sequential...)); len(got) != 2 || Overall(got) != Valid {
		t.Fatalf("Run: %v", got)
	}
}
