package cli

import (
	"bytes"
	"context"
	"fmt"
	"os"
	"os/exec"
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

var (
	binOnce sync.Once
	binDir  string // removed by TestMain
	binPath string
	binErr  error
)

// buildBinary builds redlockctl once per test binary, into a temporary
// directory that TestMain removes.
func buildBinary(t *testing.T) string {
	t.Helper()
	binOnce.Do(func() {
		if binDir, binErr = os.MkdirTemp("", "redlockctl-test-"); binErr != nil {
			return
		}
		binPath = filepath.Join(binDir, "redlockctl")
		out, err := exec.Command("go", "build", "-o", binPath, "github.com/quorumlock/quorumlock/cmd/redlockctl").CombinedOutput()
		if err != nil {
			binErr = fmt.Errorf("go build: %v\n%s", err, out)
		}
	})
	if binErr != nil {
		t.Fatal(binErr)
	}
	return binPath
}

// process is redlockctl running as its own process.
type process struct {
	cmd         *exec.Cmd
	out, errOut bytes.Buffer
	done        chan struct{}
}

func start(t *testing.T, bin string, c *clustertest.Cluster, args ...string) *process {
	t.Helper()
	p := &process{cmd: exec.Command(bin, args...), done: make(chan struct{})}
	p.cmd.Env = append(os.Environ(), EnvMasters+"="+strings.Join(c.URLs(), ","))
	p.cmd.Stdout, p.cmd.Stderr = &p.out, &p.errOut
	if err := p.cmd.Start(); err != nil {
		t.Fatal(err)
	}
	go func() { _ = p.cmd.Wait(); close(p.done) }()
	t.Cleanup(func() {
		select {
		case <-p.done:
		default:
			_ = p.cmd.Process.Kill()
			<-p.done
		}
	})
	return p
}

// wait returns the exit code, failing the test after limit.
func (p *process) wait(t *testing.T, limit time.Duration) int {
	t.Helper()
	select {
	case <-p.done:
		return p.cmd.ProcessState.ExitCode()
	case <-time.After(limit):
		t.Fatalf("redlockctl still running after %v\nstdout:\n%s\nstderr:\n%s", limit, p.out.String(), p.errOut.String())
		return -1
	}
}

// waitHeld polls until key is on every master.
func waitHeld(t *testing.T, c *clustertest.Cluster, key string) {
	t.Helper()
	deadline := time.Now().Add(10 * time.Second)
	for time.Now().Before(deadline) {
		n := 0
		for _, v := range get(t, c, key) {
			if v != "" {
				n++
			}
		}
		if n == len(c.Servers) {
			return
		}
		time.Sleep(10 * time.Millisecond)
	}
	t.Fatalf("%s never held on every master", key)
}

func TestRun(t *testing.T) {
	bin := buildBinary(t)
	c := clustertest.Start(t, 3, clustertest.AOFAlways)

	t.Run("passes the token and returns the child's exit code", func(t *testing.T) {
		p := start(t, bin, c, "run", "--key", "job", "--ttl", "2s", "--", "sh", "-c", `echo "$REDLOCK_KEY $REDLOCK_TOKEN $REDLOCK_VALID_UNTIL"; exit 7`)
		if code := p.wait(t, 30*time.Second); code != 7 {
			t.Fatalf("exit %d, want the child's 7\n%s%s", code, p.out.String(), p.errOut.String())
		}
		if !regexp.MustCompile(`^job [1-9][0-9]* \d{4}-\d\d-\d\dT\S+\n$`).MatchString(p.out.String()) {
			t.Fatalf("the child saw %q", p.out.String())
		}
		valid := strings.Fields(p.out.String())[2]
		if _, err := time.Parse(time.RFC3339Nano, valid); err != nil {
			t.Fatalf("REDLOCK_VALID_UNTIL %q: %v", valid, err)
		}
		if v := get(t, c, "job"); v[0]+v[1]+v[2] != "" {
			t.Fatalf("run left the lock behind: %q", v)
		}
	})

	t.Run("kills the child and exits 5 when the lease is deleted behind its back", func(t *testing.T) {
		// The child ignores SIGTERM: only the SIGKILL after the grace ends it.
		p := start(t, bin, c, "run", "--key", "job", "--ttl", "3s", "--kill-grace", "500ms", "--",
			"sh", "-c", `trap "" TERM; exec sleep 60`)
		waitHeld(t, c, "job")
		for _, rc := range c.Clients(t) {
			if err := rc.Del(context.Background(), "job").Err(); err != nil {
				t.Fatal(err)
			}
		}
		if code := p.wait(t, 30*time.Second); code != ExitLeaseLost {
			t.Fatalf("exit %d, want 5\n%s", code, p.errOut.String())
		}
		for _, want := range []string{"lost", "SIGTERM", "SIGKILL"} {
			if !strings.Contains(p.errOut.String(), want) {
				t.Fatalf("stderr lacks %q:\n%s", want, p.errOut.String())
			}
		}
	})

	t.Run("forwards SIGTERM to the child", func(t *testing.T) {
		ready := filepath.Join(t.TempDir(), "ready")
		p := start(t, bin, c, "run", "--key", "job", "--ttl", "10s", "--",
			"sh", "-c", `trap "exit 42" TERM; touch "$0"; while :; do sleep 0.05; done`, ready)
		for deadline := time.Now().Add(10 * time.Second); ; time.Sleep(10 * time.Millisecond) {
			if _, err := os.Stat(ready); err == nil {
				break
			}
			if time.Now().After(deadline) {
				t.Fatalf("the child never started\n%s", p.errOut.String())
			}
		}
		if err := p.cmd.Process.Signal(syscall.SIGTERM); err != nil {
			t.Fatal(err)
		}
		if code := p.wait(t, 30*time.Second); code != 42 {
			t.Fatalf("exit %d, want the child's 42\n%s", code, p.errOut.String())
		}
		if v := get(t, c, "job"); v[0]+v[1]+v[2] != "" {
			t.Fatalf("run left the lock behind: %q", v)
		}
	})

	t.Run("the child dies with redlockctl", func(t *testing.T) {
		if runtime.GOOS != "linux" {
			t.Skip("parent-death signal is Linux only")
		}
		pidFile := filepath.Join(t.TempDir(), "pid")
		p := start(t, bin, c, "run", "--key", "orphan", "--ttl", "10s", "--", "sh", "-c", `echo $$ > "$0"; exec sleep 60`, pidFile)
		var pid int
		for deadline := time.Now().Add(10 * time.Second); pid == 0; time.Sleep(10 * time.Millisecond) {
			if b, err := os.ReadFile(pidFile); err == nil {
				pid, _ = strconv.Atoi(strings.TrimSpace(string(b)))
			}
			if time.Now().After(deadline) {
				t.Fatalf("the child never started\n%s", p.errOut.String())
			}
		}
		if err := p.cmd.Process.Kill(); err != nil {
			t.Fatal(err)
		}
		p.wait(t, 10*time.Second)
		for deadline := time.Now().Add(10 * time.Second); alive(pid); time.Sleep(10 * time.Millisecond) {
			if time.Now().After(deadline) {
				_ = syscall.Kill(pid, syscall.SIGKILL)
				t.Fatalf("child %d outlived a SIGKILLed redlockctl", pid)
			}
		}
	})

	t.Run("exits 3, or --conflict-exit-code, when the lock is held", func(t *testing.T) {
		r := ctl(t, c, "lock", "job", "--ttl", "30s")
		r.want(t, ExitOK, "lock")
		defer ctl(t, c, "unlock", strings.TrimSpace(r.out))
		ctl(t, c, "run", "--key", "job", "--ttl", "2s", "--", "true").want(t, ExitNotAcquired, "run on a held key")
		ctl(t, c, "run", "--key", "job", "--ttl", "2s", "--conflict-exit-code", "9", "--", "true").want(t, 9, "run --conflict-exit-code 9")
		ctl(t, c, "run", "--key", "free", "--ttl", "2s", "--", "no-such-command-here").want(t, 127, "run of a missing command")
	})
}

func TestGoRedisLogLinesNeverReachTheTerminal(t *testing.T) {
	bin := buildBinary(t)
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	// A first lock certifies every master (a fresh cluster).
	r := ctl(t, c, "lock", "first", "--ttl", "2s")
	r.want(t, ExitOK, "first lock")
	ctl(t, c, "unlock", strings.TrimSpace(r.out)).want(t, ExitOK, "unlock")
	if err := c.Servers[0].Kill(); err != nil {
		t.Fatal(err)
	}
	for _, args := range [][]string{{"status"}, {"lock", "k", "--ttl", "2s"}, {"doctor"}} {
		p := start(t, bin, c, args...)
		code := p.wait(t, 30*time.Second)
		if want := map[string]int{"status": 0, "lock": 0, "doctor": 1}[args[0]]; code != want {
			t.Errorf("%v: exit %d, want %d\n%s", args, code, want, p.errOut.String())
		}
		for _, line := range strings.Split(p.errOut.String(), "\n") {
			if strings.HasPrefix(line, "redis: ") || strings.HasPrefix(line, "INFO:") || regexp.MustCompile(`^\d{4}/\d\d/\d\d `).MatchString(line) {
				t.Errorf("%v: a library log line reached stderr: %q", args, line)
			}
		}
		if args[0] != "lock" && !strings.Contains(p.out.String()+p.errOut.String(), "connection refused") {
			t.Errorf("%v does not say that master 0 refuses connections:\n%s%s", args, p.out.String(), p.errOut.String())
		}
	}
}

// alive reports whether pid runs (a zombie, dead but not reaped, is not).
func alive(pid int) bool {
	b, err := os.ReadFile(fmt.Sprintf("/proc/%d/stat", pid))
	if err != nil {
		return false
	}
	_, rest, _ := strings.Cut(string(b), ") ")
	return !strings.HasPrefix(rest, "Z") && !strings.HasPrefix(rest, "X")
}
