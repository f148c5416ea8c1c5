package cli

import (
	"bytes"
	"context"
	"os"
	"path/filepath"
	"regexp"
	"runtime"
	"strconv"
	"strings"
	"sync"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// Issue 17 item 3: a job script whose loop runs in a child shell. When the
// lease is lost, run must stop the whole process group, not only its direct
// child: before the fix the grandchild kept appending to its file after run
// exited 5, while a second owner held the lock.
func TestRunStopsTheWholeProcessGroup(t *testing.T) {
	if runtime.GOOS != "linux" {
		t.Skip("run signals the process group on Linux only")
	}
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	dir := t.TempDir()
	pidFile, out := filepath.Join(dir, "pid"), filepath.Join(dir, "out")
	// The grandchild's own stdout and stderr are not run's (a process
	// holding run's stderr pipe open would keep os/exec's Wait waiting).
	script := `sh -c 'echo $$ > "$0"; while :; do echo x >> "$1"; sleep 0.05; done' "$0" "$1" >/dev/null 2>&1 & wait`
	done := make(chan result, 1)
	go func() {
		// Not ctl: run's command writes to the same stderr as redlockctl
		// (through os/exec's copying goroutine), so the buffer is locked.
		var stdout, stderr lockedBuffer
		code := Execute(context.Background(),
			[]string{"run", "--key", "job", "--ttl", "3s", "--kill-grace", "5s", "--", "sh", "-c", script, pidFile, out},
			Env{Stdout: &stdout, Stderr: &stderr, Getenv: func(k string) string {
				return map[string]string{EnvMasters: strings.Join(c.URLs(), ",")}[k]
			}})
		done <- result{code, stdout.String(), stderr.String()}
	}()

	// The grandchild runs and writes.
	var pid int
	for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
		if b, err := os.ReadFile(pidFile); err == nil && strings.HasSuffix(string(b), "\n") {
			if pid, err = strconv.Atoi(strings.TrimSpace(string(b))); err != nil {
				t.Fatal(err)
			}
			if st, err := os.Stat(out); err == nil && st.Size() > 0 {
				break
			}
		}
		if time.Now().After(deadline) {
			t.Fatal("the grandchild never started")
		}
	}
	t.Cleanup(func() { _ = syscall.Kill(pid, syscall.SIGKILL) })
	waitHeld(t, c, "job")

	// The lease is lost behind run's back, and a second owner takes the key.
	for _, rc := range c.Clients(t) {
		if err := rc.Del(context.Background(), "job").Err(); err != nil {
			t.Fatal(err)
		}
	}
	r := ctl(t, c, "lock", "job", "--ttl", "30s")
	r.want(t, ExitOK, "a second owner's lock")
	if h, err := ParseHandle(r.out); err != nil || h.Token < 2 {
		t.Fatalf("second owner: %+v, %v", h, err)
	}

	var res result
	select {
	case res = <-done:
	case <-time.After(30 * time.Second):
		t.Fatal("run did not end after its lease was lost")
	}
	res.want(t, ExitLeaseLost, "run whose lease was lost")
	if alive(pid) {
		t.Fatalf("the grandchild %d still runs after run exited 5, while a second owner holds the lock", pid)
	}
	if !strings.Contains(res.errOut, "SIGTERM to process group") {
		t.Fatalf("run does not say it signalled the process group:\n%s", res.errOut)
	}
	before, err := os.Stat(out)
	if err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // four of its loop's turns
	if after, _ := os.Stat(out); after.Size() != before.Size() {
		t.Fatalf("the grandchild's file grew from %d to %d bytes after run exited", before.Size(), after.Size())
	}
}

// Issue 20: KEY is positional in run, as in lock and status; --key stays as
// an alias, and the two must agree. --conflict-exit-code 0 (cron's "skip
// quietly") says it in one line, not a line per master.
func TestRunKeyArgumentAndQuietConflict(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	check := []string{"sh", "-c", `test "$REDLOCK_KEY" = job`}
	for _, args := range [][]string{
		append([]string{"run", "job", "--ttl", "2s", "--"}, check...),
		append([]string{"run", "--key", "job", "--ttl", "2s", "--"}, check...),
		append([]string{"run", "job", "--key", "job", "--ttl", "2s", "--"}, check...),
	} {
		ctl(t, c, args...).want(t, ExitOK, strings.Join(args, " "))
	}
	// Without --: the first argument is KEY, the rest CMD (with --key, every
	// argument is CMD).
	for _, args := range [][]string{{"run", "job", "--ttl", "2s", "env"}, {"run", "--key", "job", "--ttl", "2s", "env"}} {
		r := ctl(t, c, args...)
		r.want(t, ExitOK, strings.Join(args, " "))
		if !regexp.MustCompile(`(?m)^` + EnvKey + `=job$`).MatchString(r.out) {
			t.Fatalf("%q: the command's environment:\n%s", args, r.out)
		}
	}
	r := ctl(t, c, "run", "job", "--key", "other", "--ttl", "2s", "--", "true")
	r.want(t, ExitUsage, "run with KEY and --key differing")
	if !strings.Contains(r.errOut, `KEY "job" and --key "other" differ`) {
		t.Fatalf("run with two keys:\n%s", r.errOut)
	}
	r = ctl(t, c, "run", "--ttl", "2s", "--", "true")
	r.want(t, ExitUsage, "run without a key")
	if !strings.Contains(r.errOut, "run needs KEY") {
		t.Fatalf("run without a key:\n%s", r.errOut)
	}
	ctl(t, c, "run", "a", "b", "--ttl", "2s", "--", "true").want(t, ExitUsage, "run with two keys before --")

	r = ctl(t, c, "lock", "job", "--ttl", "30s")
	r.want(t, ExitOK, "lock")
	defer ctl(t, c, "unlock", strings.TrimSpace(r.out))
	r = ctl(t, c, "run", "job", "--ttl", "2s", "--", "true")
	r.want(t, ExitNotAcquired, "run of a held key")
	if n := strings.Count(r.errOut, "\n"); n < 2 {
		t.Fatalf("without --conflict-exit-code run explains each master; stderr:\n%s", r.errOut)
	}
	r = ctl(t, c, "run", "job", "--ttl", "2s", "--conflict-exit-code", "0", "--", "true")
	r.want(t, 0, "run --conflict-exit-code 0 of a held key")
	if n := strings.Count(r.errOut, "\n"); n > 1 || r.out != "" {
		t.Fatalf("run --conflict-exit-code 0 printed %d lines on stderr (want at most one), stdout %q:\n%s", n, r.out, r.errOut)
	}
}

// lockedBuffer is a bytes.Buffer safe for concurrent writers.
type lockedBuffer struct {
	mu sync.Mutex
	b  bytes.Buffer
}

func (l *lockedBuffer) Write(p []byte) (int, error) {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.Write(p)
}

func (l *lockedBuffer) String() string {
	l.mu.Lock()
	defer l.mu.Unlock()
	return l.b.String()
}
