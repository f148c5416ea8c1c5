package model

import (
	"bytes"
	"context"
	"os"
	"os/exec"
	"path/filepath"
	"regexp"
	"strconv"
	"strings"
	"testing"
	"time"
)

// The model checked by every run. Configurations differ only in the cpp
// macros handed to spin (see the bounds section of fencing.pml).
const modelFile = "fencing.pml"

// Limits of one verification. pan stops with "reached -DMEMLIM bound" (and the
// test fails as incomplete) rather than use more than memLimitMB megabytes;
// the largest run below needs about 0.8 GB with -DCOLLAPSE. runTimeout only
// catches a hung tool: the largest run takes about 35 s on one core.
const (
	memLimitMB = 3500
	runTimeout = 5 * time.Minute
)

// ccFlags are the gcc flags for every pan: safety properties only, state
// vector compression, a memory cap. -w silences gcc's
// -Wstringop-overflow false positives in spin's generated bounds checks.
var ccFlags = []string{"-O2", "-w", "-DSAFETY", "-DCOLLAPSE", "-DMEMLIM=" + strconv.Itoa(memLimitMB)}

// panFlags for the exhaustive searches: a depth bound far above the deepest
// path (about 170 steps), and a 2^25-slot hash table (pan grows it if needed).
var panFlags = []string{"-m10000", "-w25"}

// A run is one configuration of the model.
type run struct {
	name string
	// defines are the model macros passed to spin (-DNAME or -DNAME=value).
	defines []string
	// cc are gcc flags for pan on top of ccFlags.
	cc []string
	// violation, for runs that must fail, is the text of the assertion
	// that pan must report violated.
	violation string
}

// soundRuns must verify without error in a complete search. Their sizes on
// the development machine (spin 6.5.2, gcc 12, -O2, one core; pan is single
// threaded), all with at most one master restart and 2 writes per lease
// unless noted:
//
//	2 clients x 2 attempts, lossy:            15.8M states, depth 167, ~25 s, 0.9 GB RSS
//	3 clients x 1 attempt,  lossy:            14.1M states, depth 136, ~24 s, 0.8 GB RSS
//	2 x 2, no loss, 1 write, writes interleaved: 10.2M states, depth 143, ~15 s, 0.7 GB RSS
var soundRuns = []run{
	{name: "2clients_2attempts"},
	{name: "3clients_1attempt", defines: []string{"-DCLIENTS=3", "-DATTEMPTS=1"}},
	// Cross-check of the write-deferral reduction (see Writer in
	// fencing.pml): writes interleaved with every protocol step. Without
	// message loss and with one write per lease to fit the time budget.
	{name: "2clients_2attempts_interleaved_writes", defines: []string{"-DINTERLEAVED", "-DLOSSY=0", "-DWRITES=1"}},
}

// naiveRuns must find a counterexample. They use a breadth-first search so
// that the trail is a shortest one.
var naiveRuns = []run{
	// P1: the tokens are not monotonic (found with or without a restart).
	{name: "naive_P1", defines: []string{"-DNAIVE"}, cc: []string{"-DBFS"},
		violation: "tok[L]>tok[m]"},
	// P2: with P1 unchecked, and with neither restart nor message loss,
	// the store accepts a stale holder's write.
	{name: "naive_P2", defines: []string{"-DNAIVE", "-DCHECK_P1=0", "-DRESTART=0", "-DLOSSY=0"}, cc: []string{"-DBFS"},
		violation: "!((fenced&(1<<"},
}

// tools returns the paths of spin and gcc, failing the test if either is
// missing: the model check is part of the test suite and is never skipped.
func tools(t *testing.T) (spin, gcc string) {
	t.Helper()
	spin, err := exec.LookPath("spin")
	if err != nil {
		t.Fatalf("spin (the SPIN model checker) is not on PATH: %v; install it (Debian/Ubuntu: apt-get install spin) to verify fencing.pml", err)
	}
	gcc, err = exec.LookPath("gcc")
	if err != nil {
		t.Fatalf("gcc is not on PATH: %v; spin needs it to preprocess fencing.pml and the test needs it to compile the pan verifier", err)
	}
	return spin, gcc
}

// verify generates, compiles and runs pan for r in a fresh temporary
// directory and returns the directory and pan's output.
func verify(t *testing.T, r run) (dir, out string) {
	t.Helper()
	spin, gcc := tools(t)
	dir = t.TempDir()
	src, err := os.ReadFile(modelFile)
	if err != nil {
		t.Fatal(err)
	}
	if err := os.WriteFile(filepath.Join(dir, modelFile), src, 0o644); err != nil {
		t.Fatal(err)
	}

	spinArgs := append(append([]string{}, r.defines...), "-a", modelFile)
	execIn(t, dir, spin, spinArgs...)

	ccArgs := append(append(append([]string{}, ccFlags...), r.cc...), "-o", "pan", "pan.c")
	execIn(t, dir, gcc, ccArgs...)

	start := time.Now()
	out = execIn(t, dir, filepath.Join(dir, "pan"), panFlags...)
	t.Logf("spin %s; gcc %s; ./pan %s: %s wall", strings.Join(spinArgs, " "),
		strings.Join(ccArgs, " "), strings.Join(panFlags, " "), time.Since(start).Round(time.Millisecond))
	logStats(t, out)
	return dir, out
}

// execIn runs name with args in dir and returns its combined output, failing
// the test if it cannot run, exits non-zero or times out.
func execIn(t *testing.T, dir, name string, args ...string) string {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), runTimeout)
	defer cancel()
	cmd := exec.CommandContext(ctx, name, args...)
	cmd.Dir = dir
	var buf bytes.Buffer
	cmd.Stdout = &buf
	cmd.Stderr = &buf
	if err := cmd.Run(); err != nil {
		t.Fatalf("%s %s: %v\n%s", name, strings.Join(args, " "), err, buf.String())
	}
	return buf.String()
}

var (
	reVector  = regexp.MustCompile(`State-vector (\d+) byte, depth reached (\d+), errors: (\d+)`)
	reStored  = regexp.MustCompile(`(?m)^\s*([0-9.e+]+) states, stored`)
	reMatched = regexp.MustCompile(`(?m)^\s*([0-9.e+]+) states, matched`)
	reMemory  = regexp.MustCompile(`(?m)^\s*([0-9.]+)\s+total actual memory usage`)
	reElapsed = regexp.MustCompile(`pan: elapsed time ([0-9.e+]+) seconds`)
)

// panErrors returns the error count pan reports, failing the test if the
// summary line is missing.
func panErrors(t *testing.T, out string) int {
	t.Helper()
	m := reVector.FindStringSubmatch(out)
	if m == nil {
		t.Fatalf("no \"State-vector ... errors: N\" line in pan output:\n%s", out)
	}
	n, err := strconv.Atoi(m[3])
	if err != nil {
		t.Fatal(err)
	}
	return n
}

// logStats logs the key figures of a pan run.
func logStats(t *testing.T, out string) {
	t.Helper()
	find := func(re *regexp.Regexp) string {
		if m := re.FindStringSubmatch(out); m != nil {
			return m[1]
		}
		return "?"
	}
	vec, depth := "?", "?"
	if m := reVector.FindStringSubmatch(out); m != nil {
		vec, depth = m[1], m[2]
	}
	t.Logf("pan: %s states stored, %s matched, depth reached %s, state vector %s bytes, %s MB, %s s",
		find(reStored), find(reMatched), depth, vec, find(reMemory), find(reElapsed))
}

// incomplete lists pan messages that mean the state space was not fully
// explored, so that "errors: 0" would prove nothing.
var incomplete = []string{
	"Search not completed",
	"max search depth too small",
	"search depth too small",
	"reached -DMEMLIM bound",
	"out of memory",
	"Bit statespace search",
	"Hash-Compact",
	"hash-compact",
}

func TestSoundProtocolVerifies(t *testing.T) {
	tools(t)
	for _, r := range soundRuns {
		t.Run(r.name, func(t *testing.T) {
			_, out := verify(t, r)
			if !strings.Contains(out, "Full statespace search for:") {
				t.Errorf("pan did not do a full state-space search:\n%s", out)
			}
			for _, s := range incomplete {
				if strings.Contains(out, s) {
					t.Errorf("incomplete search: pan output contains %q:\n%s", s, out)
				}
			}
			if n := panErrors(t, out); n != 0 || strings.Contains(out, "assertion violated") {
				t.Errorf("pan found %d error(s) in the sound protocol:\n%s", n, out)
			}
		})
	}
}

func TestNaiveProtocolFails(t *testing.T) {
	spin, _ := tools(t)
	for _, r := range naiveRuns {
		t.Run(r.name, func(t *testing.T) {
			dir, out := verify(t, r)
			if n := panErrors(t, out); n < 1 {
				t.Fatalf("pan found no error in the naive protocol; want a violation of %q:\n%s", r.violation, out)
			}
			if !strings.Contains(out, "assertion violated") || !strings.Contains(out, r.violation) {
				t.Fatalf("pan did not report the assertion %q violated:\n%s", r.violation, out)
			}
			// Replay the counterexample and log its events.
			trail := execIn(t, dir, spin, append(append([]string{}, r.defines...), "-t", modelFile)...)
			var events []string
			for _, line := range strings.Split(trail, "\n") {
				if i := strings.Index(line, "MSC: "); i >= 0 {
					events = append(events, "  "+line[i+len("MSC: "):])
				}
			}
			t.Logf("counterexample (%s):\n%s", r.violation, strings.Join(events, "\n"))
		})
	}
}
