package history

import (
	"bytes"
	"strings"
	"testing"
)

// Any input a user hands to `jepsen-like check` is decoded and validated
// without panicking; what decodes and validates encodes back to events that
// decode the same.
func FuzzDecode(f *testing.F) {
	f.Add(`{"index":0,"process":1,"type":"invoke","f":"acquire","key":"k","value":"","token":0,"time_ns":1}` + "\n" +
		`{"index":1,"process":1,"type":"ok","f":"acquire","key":"k","value":"","token":3,"time_ns":2,"valid_until_ns":99}`)
	f.Add(`{"index":0}`)
	f.Add("not json\n")
	f.Add("")
	f.Fuzz(func(t *testing.T, in string) {
		events, err := Decode(strings.NewReader(in))
		if err != nil {
			return
		}
		if Validate(events) != nil {
			return
		}
		var buf bytes.Buffer
		if err := Encode(&buf, events); err != nil {
			t.Fatalf("Encode of decoded events: %v", err)
		}
		again, err := Decode(&buf)
		if err != nil || len(again) != len(events) {
			t.Fatalf("round trip: %d events, then %d (%v)", len(events), len(again), err)
		}
	})
}
