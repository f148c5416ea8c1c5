package cli

import (
	"strings"
	"testing"
	"time"
)

func TestHandleRoundTrip(t *testing.T) {
	h := Handle{Key: "k", Value: "v", Token: 7, ValidUntil: time.Now().Round(0).UTC(), TTLms: 1500, Masters: []string{"127.0.0.1:6379/0"}}
	s := h.Encode()
	if !strings.HasPrefix(s, "rlh1.") || strings.ContainsAny(s, " \n+/=") {
		t.Fatalf("handle %q is not one shell-safe word", s)
	}
	got, err := ParseHandle(s + "\n")
	if err != nil || got.Key != h.Key || got.Value != h.Value || got.Token != 7 || !got.ValidUntil.Equal(h.ValidUntil) || got.TTLms != 1500 {
		t.Fatalf("ParseHandle: %+v, %v", got, err)
	}
	for _, bad := range []string{"", "rlh1.", "rlh2.abc", "rlh1.%%%", "rlh1." + "e30"} {
		if _, err := ParseHandle(bad); err == nil {
			t.Errorf("ParseHandle(%q) succeeded", bad)
		}
	}
	if err := h.sameMasters([]string{"127.0.0.1:6380/0"}); err == nil {
		t.Error("a handle matched other masters")
	}
}
