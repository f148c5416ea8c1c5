package fencing

import (
	"errors"
	"testing"
)

// FuzzParseToken: a token from outside (an environment variable, a header)
// parses to a token in [1, MaxToken] that formats back to itself, or fails
// with ErrInvalidToken.
func FuzzParseToken(f *testing.F) {
	for _, s := range []string{"1", "42", "0", "-1", "+1", "007", " 1", "1 ", "9007199254740991", "9007199254740992",
		"18446744073709551615", "18446744073709551616", "0x10", "1e3", "1_000", "", "١٢", "\x00"} {
		f.Add(s)
	}
	f.Fuzz(func(t *testing.T, s string) {
		tok, err := ParseToken(s)
		if err != nil {
			if !errors.Is(err, ErrInvalidToken) || tok != 0 {
				t.Fatalf("ParseToken(%q) = %d, %v; want 0 and ErrInvalidToken", s, tok, err)
			}
			return
		}
		if tok == 0 || tok > MaxToken {
			t.Fatalf("ParseToken(%q) = %d: outside [1, MaxToken]", s, tok)
		}
		back, err := ParseToken(tok.String())
		if err != nil || back != tok {
			t.Fatalf("ParseToken(%q) = %d, which formats as %q and parses back to %d, %v", s, tok, tok.String(), back, err)
		}
	})
}
