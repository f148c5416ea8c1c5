package checker

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Issue 18 §2: the mutex checker does not trust the library's own
// valid_until_ns. An acquire of TTL 1 s whose ok came at 5 ms may claim at
// most 5 ms + 1 s − (10 ms + 2 ms) = 993 ms; claiming 995 ms is a finding,
// even with no second holder in sight. A deadline far after invoke + TTL −
// allowance is no finding: Lock may have retried after its invoke.
func TestMutexBoundsValidityByTheRecordedTTL(t *testing.T) {
	tooLong := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":5000000,"valid_until_ns":995000000}`,
		`{"process":0,"type":"invoke","f":"release","key":"k","time_ns":200000000}`,
		`{"process":0,"type":"ok","f":"release","key":"k","time_ns":210000000}`,
	)
	r := Mutex{}.Check(tooLong)
	wantVerdict(t, r, Invalid, 2)
	if !strings.Contains(r.Explanation, "drift allowance 12ms") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	exact := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":5000000,"valid_until_ns":993000000}`,
	)
	wantVerdict(t, Mutex{}.Check(exact), Valid, 0)
	retried := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":600000000,"valid_until_ns":1580000000}`,
	)
	wantVerdict(t, Mutex{}.Check(retried), Valid, 0)
	// A larger drift factor asks for more.
	wantVerdict(t, Mutex{DriftFactor: 0.05}.Check(exact), Invalid, 2)
	// Histories without ttl_ns (written before it existed) are checked for
	// overlaps only.
	wantVerdict(t, Mutex{}.Check(parse(t, sequential...)), Valid, 0)
}

// Issue 18 §2, validity counted from the end of the round: the lease below
// passes the ok bound (ok 50 ms + 1 s − 12 ms = 1.038 s), but its round's
// first command left at 10 ms, so at most 10 ms + 988 ms = 998 ms is
// validity the keys can give; 1.030 s (the round's end, 42 ms, + 988 ms) is
// a finding. The same lease claiming 998 ms, or without sent_ns, is not.
func TestMutexBoundsValidityByTheRoundsFirstSend(t *testing.T) {
	lease := func(sent, validUntil string) []history.Event {
		return parse(t,
			`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
			`{"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":50000000,"valid_until_ns":`+validUntil+sent+`}`,
		)
	}
	r := Mutex{}.Check(lease(`,"sent_ns":10000000`, "1030000000"))
	wantVerdict(t, r, Invalid, 2)
	if !strings.Contains(r.Explanation, "round's first send (0.010000s)") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	wantVerdict(t, Mutex{}.Check(lease(`,"sent_ns":10000000`, "998000000")), Valid, 0)
	wantVerdict(t, Mutex{}.Check(lease("", "1030000000")), Valid, 0)
}
