package checker

import (
	"strings"
	"testing"
)

// An acquisition returned with its validity over (issue 18 §3's
// no-validity-left-check mutant: stopped after its rounds for a TTL, then
// handed back): the hold covers nothing, so no overlap can show it, but the
// ok itself breaks the lock's contract. Up to a tenth of the TTL of lateness
// is the recording's slack; a lease with validity left at its ok is fine,
// and a semaphore's acquisition is not judged here.
func TestMutexFindsALeaseReturnedExpired(t *testing.T) {
	expired := parse(t,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":1600000000,"valid_until_ns":980000000}`,
	)
	r := Mutex{}.Check(expired)
	wantVerdict(t, r, Invalid, 2)
	if !strings.Contains(r.Explanation, "no validity was left") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	withinSlack := parse(t,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":1050000000,"valid_until_ns":980000000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"k","time_ns":1100000000,"ttl_ns":1000000000}`,
		`{"process":2,"type":"ok","f":"acquire","key":"k","token":4,"time_ns":1110000000,"valid_until_ns":2000000000}`,
	)
	wantVerdict(t, Mutex{}.Check(withinSlack), Valid, 0)
	semaphore := parse(t,
		`{"process":1,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0,"ttl_ns":1000000000}`,
		`{"process":1,"type":"ok","f":"acquire","key":"s","time_ns":1600000000,"valid_until_ns":980000000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"k","time_ns":1700000000,"ttl_ns":1000000000}`,
		`{"process":2,"type":"ok","f":"acquire","key":"k","token":4,"time_ns":1710000000,"valid_until_ns":2600000000}`,
	)
	wantVerdict(t, Mutex{}.Check(semaphore), Valid, 0)
}
