package cli

import (
	"context"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// redlockctl as the least-privilege ACL user of docs/security.md (the line
// is read from the doc, word for word): lock, extend and unlock by handle,
// and status of the key, on three masters; the password comes from a file
// and is never printed.
func TestCLIUnderTheLeastPrivilegeUser(t *testing.T) {
	doc, err := os.ReadFile("../../../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	var line string
	for _, l := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(l, "ACL SETUSER quorumlock ") {
			line = l
		}
	}
	if line == "" {
		t.Fatal("docs/security.md has no ACL SETUSER quorumlock line")
	}
	const password = "Zebra-Quokka-9231"
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	var urls []string
	for _, s := range c.Servers {
		var args []any
		for _, w := range strings.Fields(strings.ReplaceAll(line, "CHANGE-ME", password)) {
			args = append(args, w)
		}
		if err := s.Client(t).Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("%v", err)
		}
		urls = append(urls, "redis://quorumlock@"+s.Addr)
	}
	pwFile := filepath.Join(t.TempDir(), "pw")
	if err := os.WriteFile(pwFile, []byte(password+"\n"), 0o600); err != nil {
		t.Fatal(err)
	}
	run := func(args ...string) result {
		t.Helper()
		r := invoke(t, nil, "", append([]string{"--masters", strings.Join(urls, ","), "--password-file", pwFile}, args...)...)
		if strings.Contains(r.out+r.errOut, password) {
			t.Fatalf("the password reached the output of %v", args)
		}
		return r
	}
	r := run("lock", "locks:deploy", "--ttl", "10s")
	r.want(t, ExitOK, "lock as the ACL user")
	h := strings.TrimSpace(r.out)
	r = run("extend", h, "--ttl", "20s")
	r.want(t, ExitOK, "extend as the ACL user")
	h = strings.TrimSpace(r.out)
	r = run("status", "locks:deploy")
	r.want(t, ExitOK, "status of a key as the ACL user")
	if !strings.Contains(r.out, "held") {
		t.Fatalf("status as the ACL user:\n%s", r.out)
	}
	run("unlock", h).want(t, ExitOK, "unlock as the ACL user")
	r = run("lock", "other:deploy", "--ttl", "10s")
	if r.code == ExitOK || !strings.Contains(r.errOut, "NOPERM") {
		t.Fatalf("a key outside the user's pattern: exit %d\n%s", r.code, r.errOut)
	}
}
