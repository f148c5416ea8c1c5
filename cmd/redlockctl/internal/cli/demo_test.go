package cli

import (
	"strings"
	"testing"
)

func TestDemoCommandPasses(t *testing.T) {
	r := invoke(t, nil, "", "demo", "--increments", "2")
	r.want(t, ExitOK, "demo")
	if !strings.Contains(r.out, "RESULT: PASS") || strings.Contains(r.out+r.errOut, "INFO:") {
		t.Fatalf("demo output:\n%s\n%s", r.out, r.errOut)
	}
}
