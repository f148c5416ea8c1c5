// Package childtest runs one test of the current test binary again in a
// child process, so that a test can see what the code under test prints on
// the process's real stdout and stderr (go-redis's process-wide logger
// writes to file descriptor 2, whatever os.Stderr is later set to) and can
// change process-wide state without touching the parent.
package childtest

import (
	"bytes"
	"os"
	"os/exec"
	"testing"
)

// Env is the environment variable that names the scenario a child runs.
const Env = "QUORUMLOCK_CHILD_SCENARIO"

// Scenario is the scenario this process runs as a child; "" in the parent
// (where the child's test should skip).
func Scenario() string { return os.Getenv(Env) }

// Run runs the test named test (a Test function of the same binary) in a
// child process with Scenario() == scenario and the extra environment
// variables env ("KEY=VALUE"), and returns what it printed. It fails t when
// the child fails.
func Run(t testing.TB, test, scenario string, env ...string) (stdout, stderr string) {
	t.Helper()
	cmd := exec.Command(os.Args[0], "-test.run=^"+test+"$", "-test.count=1")
	cmd.Env = append(append(os.Environ(), Env+"="+scenario), env...)
	var out, errb bytes.Buffer
	cmd.Stdout, cmd.Stderr = &out, &errb
	if err := cmd.Run(); err != nil {
		t.Fatalf("child %s of %s: %v\nstdout:\n%s\nstderr:\n%s", scenario, test, err, out.String(), errb.String())
	}
	return out.String(), errb.String()
}
