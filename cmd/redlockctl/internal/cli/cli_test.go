package cli

import (
	"bytes"
	"context"
	"encoding/json"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

// result is one in-process invocation.
type result struct {
	code        int
	out, errOut string
}

// invoke runs redlockctl in process with env as its environment and stdin as
// its standard input.
func invoke(t *testing.T, env map[string]string, stdin string, args ...string) result {
	t.Helper()
	var out, errb bytes.Buffer
	code := Execute(context.Background(), args, Env{
		Stdin: strings.NewReader(stdin), Stdout: &out, Stderr: &errb,
		Getenv: func(k string) string { return env[k] },
	})
	return result{code, out.String(), errb.String()}
}

// ctl runs redlockctl against the masters of c (through REDLOCK_MASTERS).
func ctl(t *testing.T, c *clustertest.Cluster, args ...string) result {
	t.Helper()
	return invoke(t, map[string]string{EnvMasters: strings.Join(c.URLs(), ",")}, "", args...)
}

func (r result) want(t *testing.T, code int, what string) {
	t.Helper()
	if r.code != code {
		t.Fatalf("%s: exit %d, want %d\nstdout:\n%s\nstderr:\n%s", what, r.code, code, r.out, r.errOut)
	}
}

func parse[T any](t *testing.T, r result) T {
	t.Helper()
	var v T
	dec := json.NewDecoder(strings.NewReader(r.out))
	dec.DisallowUnknownFields()
	if err := dec.Decode(&v); err != nil {
		t.Fatalf("stdout is not the documented JSON: %v\n%s", err, r.out)
	}
	return v
}

func TestStatusReportsMastersAndQuorum(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "status")
	r.want(t, ExitOK, "status on a fresh durable cluster")
	if !strings.Contains(r.out, "3 of 3 masters count, 2 needed: a lock can succeed now; 1 more may fail.") || !strings.Contains(r.out, "always") {
		t.Fatalf("status output:\n%s", r.out)
	}
	j := parse[mastersJSON](t, ctl(t, c, "status", "-o", "json"))
	if j.Voting != 3 || j.Quorum != 2 || j.Margin != 1 || j.Verdict != "ok" || len(j.Masters) != 3 || !j.Masters[0].Votes || j.Masters[0].AppendFsync != "always" {
		t.Fatalf("status -o json: %+v", j)
	}
	for _, s := range c.Servers[:2] {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	r = ctl(t, c, "status")
	r.want(t, ExitNoQuorum, "status with 2 of 3 dead")
	if !strings.Contains(r.errOut, "no quorum") || !strings.Contains(r.out, "connection refused") {
		t.Fatalf("status with 2 of 3 dead does not say why:\n%s%s", r.out, r.errOut)
	}
}

func TestUsageErrorsExit2(t *testing.T) {
	c := clustertest.Start(t, 1, clustertest.AOFAlways)
	env := map[string]string{EnvMasters: c.Servers[0].URL()}
	for _, args := range [][]string{
		{"stauts"},                     // a typo
		{"status", "--no-such-flag"},   // unknown flag
		{"status", "--timeout", "0"},   // timeout must be positive
		{"status", "--timeout", "-1s"}, // likewise
		{"status", "-o", "yaml"},       // unknown format
		{"lock", "k"},                  // no --ttl
		{"lock", "k", "--ttl", "1x"},   // not a duration
		{"lock", "--ttl", "1s"},        // no key
		{"extend", "not-a-handle", "--ttl", "1s"},
		{"unlock", "rlh1.!!!"},
		{"run", "--key", "k", "--ttl", "1s"}, // no command
		{"audit", "--yes"},                   // --yes without --fix-ttl
		{"demo", "--embedded-masters", "2"},  // too few embedded masters
		{"sem", "acquire", "x"},              // no --limit
		{"bench", "--concurrency", "0"},
	} {
		if r := invoke(t, env, "", args...); r.code != ExitUsage || r.errOut == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message", args, r.code, r.errOut)
		}
	}
	// No masters anywhere, a URL that is not redis, and a password on argv.
	for _, args := range [][]string{
		{"status"},
		{"status", "--masters", "http://x:1"},
		{"status", "--masters", "redis://:secret@127.0.0.1:1"},
	} {
		r := invoke(t, nil, "", args...)
		if r.code != ExitUsage || r.errOut == "" || strings.Contains(r.errOut, "secret") {
			t.Errorf("%v: exit %d, stderr %q; want 2 with a message (and no password)", args, r.code, r.errOut)
		}
	}
}

func TestEveryCommandHasAnExample(t *testing.T) {
	var walk func(prefix []string)
	root := (&app{}).newRoot()
	walk = func(prefix []string) {
		cmd, _, err := root.Find(prefix)
		if err != nil {
			t.Fatal(err)
		}
		if cmd.Example == "" {
			t.Errorf("%q has no example in --help", strings.Join(prefix, " "))
		}
		for _, sub := range cmd.Commands() {
			if sub.Name() != "help" {
				walk(append(append([]string(nil), prefix...), sub.Name()))
			}
		}
	}
	walk(nil)
	r := invoke(t, nil, "", "status", "--help")
	r.want(t, ExitOK, "status --help")
	if !strings.Contains(r.out, "Examples:") {
		t.Fatalf("status --help:\n%s", r.out)
	}
	r = invoke(t, nil, "", "--help")
	if !strings.Contains(r.out, "4  no quorum") {
		t.Fatalf("--help does not list the exit codes:\n%s", r.out)
	}
}

func TestVersionJSON(t *testing.T) {
	r := invoke(t, nil, "", "version", "-o", "json")
	r.want(t, ExitOK, "version")
	if v := parse[versionJSON](t, r); !strings.HasPrefix(v.GoVersion, "go") || v.Version == "" {
		t.Fatalf("version: %+v", v)
	}
}

// get reads key on every master.
func get(t *testing.T, c *clustertest.Cluster, key string) []string {
	t.Helper()
	var out []string
	for _, rc := range c.Clients(t) {
		v, err := rc.Get(context.Background(), key).Result()
		if err != nil && err != redis.Nil {
			t.Fatal(err)
		}
		out = append(out, v)
	}
	return out
}

func pttls(t *testing.T, c *clustertest.Cluster, key string) []time.Duration {
	t.Helper()
	var out []time.Duration
	for _, rc := range c.Clients(t) {
		out = append(out, rc.PTTL(context.Background(), key).Val())
	}
	return out
}

var _ = inspect.OwnerID
