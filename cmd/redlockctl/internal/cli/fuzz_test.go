package cli

import (
	"testing"
	"time"
)

// A lease handle comes back from a script or a terminal: ParseHandle never
// panics, and a handle it accepts encodes back to itself.
func FuzzParseHandle(f *testing.F) {
	h := Handle{Key: "k", Value: "v", Token: 7, ValidUntil: time.Unix(1_700_000_000, 0).UTC(), TTLms: 1000, Masters: []string{"127.0.0.1:6379/0"}}
	f.Add(h.Encode())
	f.Add("rlh1.")
	f.Add("rlh1.e30")
	f.Add("not a handle")
	f.Fuzz(func(t *testing.T, s string) {
		h, err := ParseHandle(s)
		if err != nil {
			return
		}
		again, err := ParseHandle(h.Encode())
		if err != nil || again.Key != h.Key || again.Value != h.Value || again.Token != h.Token {
			t.Fatalf("re-encoded handle %+v parses as %+v (%v)", h, again, err)
		}
	})
}

// Durations and flags of every command: Execute never panics and always
// answers with one of the documented exit codes. No masters are given, so
// nothing is dialled.
func FuzzFlags(f *testing.F) {
	f.Add("status", "--timeout", "1s")
	f.Add("lock", "--ttl", "-5m")
	f.Add("run", "--kill-grace", "1e400h")
	f.Add("sem", "--limit", "99999999999999999999")
	f.Fuzz(func(t *testing.T, cmd, flag, value string) {
		if cmd == "demo" || flag == "--" || value == "--" {
			t.Skip("demo runs embedded masters, and `--` starts a child under run: neither is flag parsing")
		}
		code := invoke(t, nil, "", cmd, "k", flag, value).code
		if code < ExitOK || code > ExitLeaseLost {
			t.Fatalf("redlockctl %s k %s %q: exit %d", cmd, flag, value, code)
		}
	})
}
