package cli

import (
	"bytes"
	"context"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func run(t *testing.T, args ...string) (int, string, string) {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

func TestStatusReportsMastersAndQuorum(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	code, out, errOut := run(t, "status", "--masters", strings.Join(c.URLs(), ","))
	if code != 0 {
		t.Fatalf("status on a fresh durable cluster: exit %d\n%s%s", code, out, errOut)
	}
	if !strings.Contains(out, "3 of 3 masters vote; a lock needs 2.") || !strings.Contains(out, "always") {
		t.Fatalf("status output:\n%s", out)
	}
	if err := c.Servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	if err := c.Servers[1].Kill(); err != nil {
		t.Fatal(err)
	}
	code, out, errOut = run(t, "status", "--masters", strings.Join(c.URLs(), ","))
	if code != 1 || !strings.Contains(errOut, "no quorum") {
		t.Fatalf("status with 2 of 3 dead: exit %d\n%s%s", code, out, errOut)
	}
}

func TestUsageErrors(t *testing.T) {
	t.Setenv("REDLOCK_MASTERS", "")
	for _, args := range [][]string{
		{"status"},                            // no masters anywhere
		{"status", "--masters", "http://x:1"}, // not a redis URL
		{"status", "--no-such-flag"},          // unknown flag
		{"demo", "--masters", "2"},            // too few masters
	} {
		if code, _, errOut := run(t, args...); code != 2 || errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, code, errOut)
		}
	}
}
