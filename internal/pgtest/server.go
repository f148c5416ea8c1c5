package pgtest

import (
	"bytes"
	"context"
	"errors"
	"fmt"
	"os"
	"os/exec"
	"os/user"
	"path/filepath"
	"runtime"
	"sort"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/jackc/pgx/v5"

	"github.com/quorumlock/quorumlock/internal/freeport"
)

// server is a private postgres process.
type server struct {
	dir    string // temporary directory: data/, the socket, the logs
	port   int
	runAs  *user.User // "postgres" when the tests run as root, else nil
	cmd    *exec.Cmd  // postgres itself, or runuser running it
	exited chan struct{}
	unlock chan struct{} // ends the OS thread that started cmd (see launch)
}

func (s *server) url() string {
	return fmt.Sprintf("postgres://postgres@127.0.0.1:%d/postgres?sslmode=disable", s.port)
}

func (s *server) dataDir() string { return filepath.Join(s.dir, "data") }
func (s *server) logPath() string { return filepath.Join(s.dir, "postgres.log") }

// startServer creates a cluster with initdb and starts postgres on it.
func startServer(ctx context.Context) (*server, error) {
	bin, err := findBinaries()
	if err != nil {
		return nil, err
	}
	s := &server{}
	if os.Geteuid() == 0 {
		if s.runAs, err = user.Lookup("postgres"); err != nil {
			return nil, fmt.Errorf("running as root, which PostgreSQL refuses, and there is no \"postgres\" user to run it as (apt-get install postgresql creates one): %w", err)
		}
	}
	if s.dir, err = tempDir(s.runAs != nil); err != nil {
		return nil, err
	}
	if err := s.chown(s.dir); err != nil {
		s.removeDir()
		return nil, err
	}

	initLog := filepath.Join(s.dir, "initdb.log")
	initdb := s.command(filepath.Join(bin, "initdb"),
		"-D", s.dataDir(), "-U", "postgres", "-A", "trust", "-E", "UTF8", "--locale=C", "-N")
	if out, err := initdb.CombinedOutput(); err != nil {
		_ = os.WriteFile(initLog, out, 0o644)
		s.removeDir()
		return nil, fmt.Errorf("initdb: %w\n%s", err, tail(out, 2000))
	}

	var lastErr error
	for range 5 { // a free port can be taken between probe and bind: try again
		if s.port, err = freeport.Loopback(); err != nil {
			s.removeDir()
			return nil, err
		}
		if lastErr = s.start(ctx, filepath.Join(bin, "postgres")); lastErr == nil {
			return s, nil
		}
	}
	s.removeDir()
	return nil, lastErr
}

// command returns a command running name with args, through runuser when
// s.runAs is set.
func (s *server) command(name string, args ...string) *exec.Cmd {
	if s.runAs == nil {
		return exec.Command(name, args...)
	}
	return exec.Command("runuser", append([]string{"-u", s.runAs.Username, "--", name}, args...)...)
}

// start runs postgres on s.port and waits until it accepts connections.
func (s *server) start(ctx context.Context, postgres string) error {
	logf, err := os.OpenFile(s.logPath(), os.O_CREATE|os.O_WRONLY|os.O_APPEND, 0o644)
	if err != nil {
		return err
	}
	defer logf.Close() // the child has its own copy
	cmd := s.command(postgres,
		"-D", s.dataDir(), "-p", strconv.Itoa(s.port), "-h", "127.0.0.1", "-k", s.dir,
		"-c", "fsync=off", "-c", "synchronous_commit=off", "-c", "full_page_writes=off",
		"-c", "shared_buffers=32MB", "-c", "max_connections=100")
	cmd.Stdout, cmd.Stderr = logf, logf
	// If the test binary dies without stopping the server, the kernel sends
	// the child this signal: runuser passes SIGTERM on to postgres (and
	// SIGKILLs it 2s later), postgres itself shuts down on SIGQUIT.
	sig := syscall.SIGQUIT
	if s.runAs != nil {
		sig = syscall.SIGTERM
	}
	cmd.SysProcAttr = &syscall.SysProcAttr{Pdeathsig: sig}
	if err := s.launch(cmd); err != nil {
		return fmt.Errorf("start postgres: %w", err)
	}

	deadline := time.Now().Add(60 * time.Second)
	for {
		select {
		case <-s.exited:
			s.release()
			return fmt.Errorf("postgres on port %d exited during start-up; tail of %s:\n%s", s.port, s.logPath(), s.logTail())
		default:
		}
		pctx, cancel := context.WithTimeout(ctx, time.Second)
		conn, err := pgx.Connect(pctx, s.url())
		if err == nil {
			err = conn.Close(pctx)
		}
		cancel()
		if err == nil {
			return nil
		}
		if time.Now().After(deadline) || ctx.Err() != nil {
			s.stop()
			return fmt.Errorf("postgres on port %d did not accept connections within 60s (%v); tail of %s:\n%s", s.port, err, s.logPath(), s.logTail())
		}
		time.Sleep(50 * time.Millisecond)
	}
}

// launch starts cmd from a goroutine locked to its OS thread, which lives
// until release: Pdeathsig fires when the thread that started the child
// ends, not the process, and Go may end idle threads.
func (s *server) launch(cmd *exec.Cmd) error {
	started := make(chan error, 1)
	s.unlock = make(chan struct{})
	go func(unlock <-chan struct{}) {
		runtime.LockOSThread() // never unlocked: the thread ends with the goroutine
		err := cmd.Start()
		started <- err
		if err == nil {
			<-unlock
		}
	}(s.unlock)
	if err := <-started; err != nil {
		return err
	}
	s.cmd, s.exited = cmd, make(chan struct{})
	go func(exited chan<- struct{}) { _ = cmd.Wait(); close(exited) }(s.exited)
	return nil
}

// release ends the thread that started the process, once it has exited.
func (s *server) release() {
	if s.unlock != nil {
		close(s.unlock)
		s.unlock = nil
	}
}

// stop shuts postgres down by PID: SIGINT (fast shutdown: roll back, close
// connections, checkpoint), then SIGKILL if it is still running after 30s.
// Then it removes the directory. It is safe to call twice.
func (s *server) stop() {
	if s.cmd != nil {
		pid := s.postmasterPID()
		_ = syscall.Kill(pid, syscall.SIGINT)
		select {
		case <-s.exited:
		case <-time.After(30 * time.Second):
			_ = syscall.Kill(pid, syscall.SIGKILL)
			_ = s.cmd.Process.Kill()
			select {
			case <-s.exited:
			case <-time.After(10 * time.Second):
			}
		}
		s.release()
		s.cmd = nil
	}
	s.removeDir()
}

// postmasterPID returns the PID of postgres: the one in postmaster.pid when
// it runs under runuser (which forks it), else that of cmd.
func (s *server) postmasterPID() int {
	if s.runAs != nil {
		if b, err := os.ReadFile(filepath.Join(s.dataDir(), "postmaster.pid")); err == nil {
			first, _, _ := strings.Cut(string(b), "\n")
			if pid, err := strconv.Atoi(strings.TrimSpace(first)); err == nil && pid > 0 {
				return pid
			}
		}
	}
	return s.cmd.Process.Pid
}

func (s *server) removeDir() {
	if s.dir != "" {
		_ = os.RemoveAll(s.dir)
	}
}

func (s *server) logTail() string {
	b, _ := os.ReadFile(s.logPath())
	return tail(b, 2000)
}

// chown gives dir to s.runAs, if set.
func (s *server) chown(dir string) error {
	if s.runAs == nil {
		return nil
	}
	uid, err1 := strconv.Atoi(s.runAs.Uid)
	gid, err2 := strconv.Atoi(s.runAs.Gid)
	if err := errors.Join(err1, err2); err != nil {
		return fmt.Errorf("user postgres: %w", err)
	}
	if err := os.Chown(dir, uid, gid); err != nil {
		return fmt.Errorf("give %s to user postgres: %w", dir, err)
	}
	return nil
}

// findBinaries returns the directory holding initdb and postgres: the newest
// /usr/lib/postgresql/<version>/bin, else the directory of initdb on PATH.
func findBinaries() (string, error) {
	dirs, _ := filepath.Glob("/usr/lib/postgresql/*/bin")
	sort.Slice(dirs, func(i, j int) bool { return version(dirs[i]) > version(dirs[j]) })
	if initdb, err := exec.LookPath("initdb"); err == nil {
		dirs = append(dirs, filepath.Dir(initdb))
	}
	return firstWithBinaries(dirs)
}

// firstWithBinaries returns the first of dirs that holds both initdb and
// postgres, or an error saying how to install them.
func firstWithBinaries(dirs []string) (string, error) {
	for _, d := range dirs {
		if isExecutable(filepath.Join(d, "initdb")) && isExecutable(filepath.Join(d, "postgres")) {
			return d, nil
		}
	}
	return "", fmt.Errorf("PostgreSQL is not installed: no initdb and postgres in /usr/lib/postgresql/*/bin or on PATH. " +
		"Install it with `apt-get install postgresql`, or set " + EnvURL + " to the URL of a server to test against")
}

// version extracts the numeric version of /usr/lib/postgresql/<version>/bin.
func version(binDir string) float64 {
	v, _ := strconv.ParseFloat(filepath.Base(filepath.Dir(binDir)), 64)
	return v
}

func isExecutable(path string) bool {
	fi, err := os.Stat(path)
	return err == nil && fi.Mode().IsRegular() && fi.Mode()&0o111 != 0
}

// tempDir makes the server's directory. When another user is to run the
// server, every parent of the directory must be searchable by others, so it
// falls back from os.TempDir() to /tmp.
func tempDir(forOtherUser bool) (string, error) {
	bases := []string{os.TempDir()}
	if forOtherUser && bases[0] != "/tmp" {
		bases = append(bases, "/tmp")
	}
	var problems []string
	for _, base := range bases {
		if forOtherUser {
			if p := unsearchableParent(base); p != "" {
				problems = append(problems, fmt.Sprintf("%s is not searchable by other users", p))
				continue
			}
		}
		dir, err := os.MkdirTemp(base, "quorumlock-pgtest-")
		if err != nil {
			problems = append(problems, err.Error())
			continue
		}
		return dir, nil
	}
	return "", fmt.Errorf("no directory the postgres user can reach (%s): set TMPDIR to one", strings.Join(problems, "; "))
}

// unsearchableParent returns the first of dir and its parents that other
// users cannot search (no o+x), or "".
func unsearchableParent(dir string) string {
	dir, err := filepath.Abs(dir)
	if err != nil {
		return dir
	}
	for {
		fi, err := os.Stat(dir)
		if err != nil || fi.Mode().Perm()&0o001 == 0 {
			return dir
		}
		parent := filepath.Dir(dir)
		if parent == dir {
			return ""
		}
		dir = parent
	}
}

func tail(b []byte, n int) string {
	b = bytes.TrimSpace(b)
	if len(b) > n {
		b = b[len(b)-n:]
	}
	return string(b)
}
