package checker

import (
	"strings"
	"testing"
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
