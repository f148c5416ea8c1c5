package childtest

import (
	"fmt"
	"os"
	"strings"
	"testing"
)

func TestChild(t *testing.T) {
	if Scenario() == "" {
		t.Skip("only run as a child of TestRun")
	}
	fmt.Fprintf(os.Stdout, "out:%s:%s\n", Scenario(), os.Getenv("CHILDTEST_EXTRA"))
	fmt.Fprintf(os.Stderr, "err:%s\n", Scenario())
}

func TestRun(t *testing.T) {
	out, errOut := Run(t, "TestChild", "hello", "CHILDTEST_EXTRA=x")
	if !strings.Contains(out, "out:hello:x") || !strings.Contains(errOut, "err:hello") {
		t.Fatalf("child printed\nstdout:\n%s\nstderr:\n%s", out, errOut)
	}
}
