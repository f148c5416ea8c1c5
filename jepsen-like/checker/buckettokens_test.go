package checker

import (
	"strings"
	"testing"
)

// twoKeys is two holds of keys a and b at once, with the tokens and buckets
// given (bucket "" records none).
func twoKeys(t *testing.T, tokenA, tokenB, bucketA, bucketB string) Result {
	t.Helper()
	field := func(b string) string {
		if b == "" {
			return ""
		}
		return `,"bucket":"` + b + `"`
	}
	return Tokens{}.Check(parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"a","time_ns":0}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"b","time_ns":1}`,
		`{"process":0,"type":"ok","f":"acquire","key":"a","token":`+tokenA+`,"time_ns":10,"valid_until_ns":1000`+field(bucketA)+`}`,
		`{"process":1,"type":"ok","f":"acquire","key":"b","token":`+tokenB+`,"time_ns":11,"valid_until_ns":1000`+field(bucketB)+`}`,
		`{"process":0,"type":"invoke","f":"release","key":"a","time_ns":100}`,
		`{"process":1,"type":"invoke","f":"release","key":"b","time_ns":101}`,
		`{"process":0,"type":"ok","f":"release","key":"a","time_ns":110}`,
		`{"process":1,"type":"ok","f":"release","key":"b","time_ns":111}`,
	))
}

// Two keys of one fence bucket holding one token at once: what the mutant
// writeback-equal hands out. The per-key order cannot see it (one hold per
// key); the per-bucket check does, with both acquires as proof.
func TestTokensRepeatedInABucket(t *testing.T) {
	r := twoKeys(t, "5", "5", "7/1024", "7/1024")
	wantVerdict(t, r, Invalid, 4)
	if !strings.Contains(r.Explanation, "fence bucket 7/1024: token 5 handed out twice") {
		t.Fatalf("explanation %q", r.Explanation)
	}
	if r.Ops[0].Index != 0 || r.Ops[3].Index != 3 {
		t.Fatalf("proof %v", r.Ops)
	}
}

// The same history with distinct tokens, or with the keys in two buckets, or
// with no bucket recorded (nothing says the keys share a counter): valid.
func TestTokensDistinctInABucket(t *testing.T) {
	wantVerdict(t, twoKeys(t, "5", "6", "7/1024", "7/1024"), Valid, 0)
	wantVerdict(t, twoKeys(t, "5", "5", "7/1024", "8/1024"), Valid, 0)
	wantVerdict(t, twoKeys(t, "5", "5", "", ""), Valid, 0)
	r := twoKeys(t, "5", "6", "7/1024", "7/1024")
	if !strings.Contains(r.Explanation, "any of 1 fence buckets") {
		t.Fatalf("explanation %q", r.Explanation)
	}
}

// One key's overlapping holds with one token (a mutual exclusion failure on
// top): the per-key order skips overlapping holds, the repeat check does not.
// A semaphore's slots may repeat a token: skipped.
func TestTokensRepeatedInAKey(t *testing.T) {
	h := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":30,"valid_until_ns":1000}`,
	)
	r := Tokens{}.Check(h)
	wantVerdict(t, r, Invalid, 4)
	if !strings.Contains(r.Explanation, `key "k": token 3 handed out twice`) {
		t.Fatalf("explanation %q", r.Explanation)
	}
	sem := parse(t,
		`{"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":0}`,
		`{"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=2","token":3,"time_ns":10,"valid_until_ns":1000}`,
		`{"process":1,"type":"invoke","f":"acquire","key":"s","value":"limit=2","time_ns":20}`,
		`{"process":1,"type":"ok","f":"acquire","key":"s","value":"limit=2","token":3,"time_ns":30,"valid_until_ns":1000}`,
		`{"process":2,"type":"invoke","f":"acquire","key":"k","time_ns":40}`,
		`{"process":2,"type":"ok","f":"acquire","key":"k","token":3,"time_ns":50,"valid_until_ns":1000}`,
	)
	wantVerdict(t, Tokens{}.Check(sem), Valid, 0)
}
