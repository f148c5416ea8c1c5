package mutants

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"io"
	"io/fs"
	"os"
	"os/exec"
	"path/filepath"
	"strconv"
	"strings"
	"syscall"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
)

// DefaultNemesis is the suite's default fault mix for mutants: every fault
// that the defaults survive, each at least once. Not clock-jump: it breaks
// every Redlock, so it would kill the control too. Not failover (yet): its
// lagging replica, set up during the run, used to change the master's
// replication id, so the restart rules quarantined it and the episode was
// skipped (no hold) on seeds 1–4; since nemesis.Prepare attaches the
// replica before the clients start, seed 1 injects it, but adding it
// changes every row of the mutation table (docs/jepsen-like.md).
// stale-cache is there for the fast path's count (fastpath-q-1),
// restart-long for rule Q's lambda set (lambda-short), restart-long-merged
// for the same rule in merged acquires (lambda-short-merged), bridge for the
// quorum's size (quorum-1: with a quorum of two, the half that reaches the
// two masters outside a holder's majority takes the lock too).
const DefaultNemesis = "pause,kill,partition,slow-replies,client-pause,restart,restart-aof,restart-delayed,flush,slow-extend,acquire-pause,stale-cache,restart-long,restart-long-merged,bridge"

// DefaultWorkload is the workload of the mutants' runs: set, a
// read-modify-write guarded by the lock without fencing, where an
// acquisition that returns a lease with no validity left shows as a lost
// add (the lock's own holds cannot show it: such a lease holds nothing).
const DefaultWorkload = "set"

// DefaultBucketKeys is the --bucket-keys of the mutants' runs: four extra
// processes take keys of the workload key's fence bucket, so that
// write-back rounds of several keys race for one counter and the tokens
// checker sees a token handed out twice in the bucket (writeback-equal).
const DefaultBucketKeys = 4

// Options of Run. Zero values are the defaults documented on each field.
type Options struct {
	// Root is the module root (default: found from the working directory).
	Root string
	// Nemesis is the fault mix (default DefaultNemesis).
	Nemesis string
	// Workload of every run (default DefaultWorkload).
	Workload string
	// Time is each run's --time (default 20 s; a run lasts until every
	// fault ran once).
	Time time.Duration
	// Budget bounds each run, build excluded (default 240 s): a run still
	// going is stopped and counted as not killed. Most runs take 80–100 s;
	// quorum-1's 138–143 s, its restart and flush episodes waiting out their
	// timeouts for a hold they never inject on.
	Budget time.Duration
	// Seed of every run (default 1).
	Seed uint64
	// Clients of every run (default 4).
	Clients int
	// BucketKeys is every run's --bucket-keys (default DefaultBucketKeys;
	// negative: none).
	BucketKeys int
	// Only runs the mutants of these names (default all).
	Only []string
	// Log receives one line per step (default: nothing).
	Log io.Writer
}

// Outcome is what the suite said about one build.
type Outcome struct {
	Mutant Mutant
	// Control marks the unmutated build, which must be valid.
	Control bool
	// Verdict is the run's overall verdict ("" when the run did not finish).
	Verdict checker.Verdict
	// Killers are the checkers that said invalid, then those that said
	// unknown (written "name?"): the verdict was not valid.
	Killers []string
	// Summary is the checkers' one-line summary.
	Summary string
	Elapsed time.Duration
	// Err says why there is no verdict (the build failed, the budget ran
	// out).
	Err error
}

// Killed reports whether the suite found the bug: a verdict other than
// valid.
func (o Outcome) Killed() bool { return o.Verdict == checker.Invalid || o.Verdict == checker.Unknown }

func (o *Options) normalize() error {
	if o.Root == "" {
		wd, err := os.Getwd()
		if err != nil {
			return fmt.Errorf("mutants: %w", err)
		}
		if o.Root, err = Root(wd); err != nil {
			return err
		}
	}
	if o.Nemesis == "" {
		o.Nemesis = DefaultNemesis
	}
	if o.Workload == "" {
		o.Workload = DefaultWorkload
	}
	if o.Time == 0 {
		o.Time = 20 * time.Second
	}
	if o.Budget == 0 {
		o.Budget = 240 * time.Second
	}
	if o.Seed == 0 {
		o.Seed = 1
	}
	if o.Clients == 0 {
		o.Clients = 4
	}
	if o.BucketKeys == 0 {
		o.BucketKeys = DefaultBucketKeys
	}
	if o.Log == nil {
		o.Log = io.Discard
	}
	return nil
}

// Select returns the mutants named (all when names is empty); an unknown
// name is an error.
func Select(names []string) ([]Mutant, error) {
	if len(names) == 0 {
		return All, nil
	}
	var out []Mutant
	for _, n := range names {
		found := false
		for _, m := range All {
			if m.Name == n {
				out, found = append(out, m), true
			}
		}
		if !found {
			var known []string
			for _, m := range All {
				known = append(known, m.Name)
			}
			return nil, fmt.Errorf("mutants: unknown mutant %q (want one of %s)", n, strings.Join(known, ", "))
		}
	}
	return out, nil
}

// Run copies the module to a temporary directory and, for the control
// (the code as it is) and then each mutant, applies it, builds
// jepsen-like, restores the source and runs the suite against the build.
// Every snippet is checked first: a stale one fails the whole run before
// anything is built. Run returns the outcomes in order; its error is for
// what prevents measuring at all (a stale snippet, no module, a failed
// control build).
func Run(ctx context.Context, o Options) ([]Outcome, error) {
	if err := o.normalize(); err != nil {
		return nil, err
	}
	ms, err := Select(o.Only)
	if err != nil {
		return nil, err
	}
	for _, m := range ms {
		b, err := os.ReadFile(filepath.Join(o.Root, filepath.FromSlash(m.File)))
		if err != nil {
			return nil, fmt.Errorf("mutants: %w", err)
		}
		if _, err := m.Apply(b); err != nil {
			return nil, err
		}
	}
	tmp, err := os.MkdirTemp("", "jepsen-like-mutants-")
	if err != nil {
		return nil, fmt.Errorf("mutants: %w", err)
	}
	defer os.RemoveAll(tmp)
	src := filepath.Join(tmp, "src")
	if err := copyModule(o.Root, src); err != nil {
		return nil, err
	}
	var outs []Outcome
	control := Outcome{Mutant: Mutant{Name: "control", Bug: "none: the code as it is"}, Control: true}
	o.one(ctx, src, tmp, &control)
	if control.Err != nil && control.Verdict == "" {
		return []Outcome{control}, fmt.Errorf("mutants: the control: %w", control.Err)
	}
	outs = append(outs, control)
	for _, m := range ms {
		out := Outcome{Mutant: m}
		if ctx.Err() != nil {
			return outs, ctx.Err()
		}
		o.one(ctx, src, tmp, &out)
		outs = append(outs, out)
	}
	return outs, nil
}

// one builds and runs one mutant (or the control) into out.
func (o Options) one(ctx context.Context, src, tmp string, out *Outcome) {
	name := out.Mutant.Name
	bin := filepath.Join(tmp, "bin", "jepsen-like-"+name)
	restore := func() error { return nil }
	if !out.Control {
		var err error
		if restore, err = out.Mutant.ApplyIn(src); err != nil {
			out.Err = err
			return
		}
	}
	fmt.Fprintf(o.Log, "%s: building\n", name)
	build := exec.CommandContext(ctx, "go", "build", "-o", bin, "./jepsen-like/cmd/jepsen-like")
	build.Dir = src
	msg, berr := build.CombinedOutput()
	if err := restore(); err != nil {
		out.Err = err
		return
	}
	if berr != nil {
		out.Err = fmt.Errorf("build: %v: %s", berr, strings.TrimSpace(string(msg)))
		fmt.Fprintf(o.Log, "%s: %v\n", name, out.Err)
		return
	}
	dir := filepath.Join(tmp, "out", name)
	fmt.Fprintf(o.Log, "%s: running %s %s for %v (seed %d, bucket keys %d, budget %v)\n", name, o.Workload, o.Nemesis, o.Time, o.Seed, max(o.BucketKeys, 0), o.Budget)
	start := time.Now()
	rctx, cancel := context.WithTimeout(ctx, o.Budget)
	defer cancel()
	args := []string{"run", "--backend", "local", "--workload", o.Workload, "--nemesis", o.Nemesis,
		"--time", o.Time.String(), "--clients", strconv.Itoa(o.Clients), "--seed", strconv.FormatUint(o.Seed, 10), "--out", dir}
	if o.BucketKeys > 0 {
		args = append(args, "--bucket-keys", strconv.Itoa(o.BucketKeys))
	}
	run := exec.CommandContext(rctx, bin, args...)
	run.SysProcAttr = &syscall.SysProcAttr{Setpgid: true}
	run.Cancel = func() error { return syscall.Kill(-run.Process.Pid, syscall.SIGINT) }
	run.WaitDelay = 15 * time.Second
	var stderr strings.Builder
	run.Stderr = &stderr
	rerr := run.Run()
	out.Elapsed = time.Since(start)
	var res struct {
		Verdict checker.Verdict  `json:"verdict"`
		Results []checker.Result `json:"results"`
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err == nil {
		err = json.Unmarshal(b, &res)
	}
	switch {
	case rctx.Err() != nil && ctx.Err() == nil:
		out.Err = fmt.Errorf("the run took longer than its budget %v", o.Budget)
	case err != nil:
		var ee *exec.ExitError
		if errors.As(rerr, &ee) || rerr == nil {
			out.Err = fmt.Errorf("no results.json (exit %v): %s", rerr, lastLine(stderr.String()))
		} else {
			out.Err = fmt.Errorf("run: %w", rerr)
		}
	default:
		out.Verdict, out.Summary = res.Verdict, checker.Summary(res.Results)
		for _, v := range []checker.Verdict{checker.Invalid, checker.Unknown} {
			for _, r := range res.Results {
				if r.Verdict == v {
					k := r.Checker
					if v == checker.Unknown {
						k += "?"
					}
					out.Killers = append(out.Killers, k)
					fmt.Fprintf(o.Log, "%s: %s %s: %s\n", name, r.Checker, r.Verdict, r.Explanation)
				}
			}
		}
	}
	fmt.Fprintf(o.Log, "%s: %s in %.0fs: %s %v\n", name, out.Verdict, out.Elapsed.Seconds(), out.Summary, out.Err)
}

func lastLine(s string) string {
	lines := strings.Split(strings.TrimSpace(s), "\n")
	return lines[len(lines)-1]
}

// copyModule copies the module's regular files, without .git, to dst.
func copyModule(root, dst string) error {
	err := filepath.WalkDir(root, func(path string, d fs.DirEntry, err error) error {
		if err != nil {
			return err
		}
		rel, err := filepath.Rel(root, path)
		if err != nil {
			return err
		}
		if d.IsDir() && (d.Name() == ".git" || d.Name() == "testdata" && strings.Contains(rel, "fuzz")) {
			return filepath.SkipDir
		}
		if d.Name() == ".git" {
			return nil // a worktree's .git file
		}
		target := filepath.Join(dst, rel)
		if d.IsDir() {
			return os.MkdirAll(target, 0o755)
		}
		if !d.Type().IsRegular() {
			return nil
		}
		b, err := os.ReadFile(path)
		if err != nil {
			return err
		}
		return os.WriteFile(target, b, 0o644)
	})
	if err != nil {
		return fmt.Errorf("mutants: copy the module: %w", err)
	}
	return nil
}
