package main

import (
	"bytes"
	"context"
	"encoding/json"
	"os"
	"path/filepath"
	"strings"
	"testing"

	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func write(t *testing.T, lines ...string) string {
	t.Helper()
	p := filepath.Join(t.TempDir(), "history.jsonl")
	if err := os.WriteFile(p, []byte(strings.Join(lines, "\n")+"\n"), 0o644); err != nil {
		t.Fatal(err)
	}
	return p
}

func cli(args ...string) (int, string, string) {
	var out, errb bytes.Buffer
	code := run(context.Background(), args, &out, &errb)
	return code, out.String(), errb.String()
}

var overlapping = []string{
	`{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
	`{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}`,
	`{"index":2,"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}`,
	`{"index":3,"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":30,"valid_until_ns":1000}`,
}

func TestCheckExitCodes(t *testing.T) {
	code, out, _ := cli("check", write(t, overlapping[:2]...))
	if code != 0 || !strings.Contains(out, "verdict: valid") {
		t.Fatalf("valid history: exit %d, %s", code, out)
	}
	code, out, _ = cli("check", write(t, overlapping...))
	if code != 1 || !strings.Contains(out, "mutex") || !strings.Contains(out, "verdict: invalid") {
		t.Fatalf("overlapping holds: exit %d, %s", code, out)
	}
	code, out, _ = cli("check", "-o", "json", write(t, overlapping...))
	var res struct {
		Verdict string `json:"verdict"`
		Results []struct {
			Checker string `json:"checker"`
			Verdict string `json:"verdict"`
			Ops     []any  `json:"ops"`
		} `json:"results"`
	}
	if err := json.Unmarshal([]byte(out), &res); err != nil || code != 1 || res.Verdict != "invalid" || res.Results[0].Checker != "mutex" || len(res.Results[0].Ops) == 0 {
		t.Fatalf("-o json: exit %d, %v, %s", code, err, out)
	}
}

// Issue 18 §1: no "valid" about nothing, and a bad limit is bad usage.
func TestCheckWithoutEvidenceExits2(t *testing.T) {
	cases := map[string][]string{
		"empty file": {""},
		"no completion": {`{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
			`{"index":1,"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":1}`},
		"every token 0": {`{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}`,
			`{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","time_ns":10,"valid_until_ns":1000}`},
		"limit=abc": {`{"index":0,"process":0,"type":"invoke","f":"acquire","key":"s","value":"limit=abc","time_ns":0}`,
			`{"index":1,"process":0,"type":"ok","f":"acquire","key":"s","value":"limit=abc","time_ns":10,"valid_until_ns":1000}`},
	}
	for name, lines := range cases {
		t.Run(name, func(t *testing.T) {
			code, out, stderr := cli("check", write(t, lines...))
			if code != 2 || strings.Contains(out, "verdict: valid") {
				t.Fatalf("exit %d, %s %s; want 2", code, out, stderr)
			}
		})
	}
	// A run's results.json next to the history holds it to the faults
	// the run asked for.
	p := write(t, overlapping[:2]...)
	if err := os.WriteFile(filepath.Join(filepath.Dir(p), "results.json"), []byte(`{"nemeses":["restart"],"no_fencing":false}`), 0o644); err != nil {
		t.Fatal(err)
	}
	if code, out, _ := cli("check", p); code != 2 || !strings.Contains(out, "restart never injected") {
		t.Fatalf("restart asked for, never injected: exit %d, %s", code, out)
	}
}

func TestBadUsageExits2(t *testing.T) {
	cases := [][]string{
		{"check"},
		{"check", "a", "b"},
		{"check", "/nonexistent/history.jsonl"},
		{"check", "-o", "yaml", "x"},
		{"run", "--out", t.TempDir(), "--nemesis", "meteor"},
		{"run", "--out", t.TempDir(), "--backend", "cloud"},
		{"run", "--out", t.TempDir(), "--workload", "queue"},
		{"run", "--out", t.TempDir(), "--clients", "1"},
		{"run", "--nemesis", "pause"},
		{"run", "--out", t.TempDir(), "--data-loss-tolerance", "-1"},
		{"run", "--out", t.TempDir(), "--data-loss-tolerance", "5"},
		{"run", "--out", t.TempDir(), "--data-loss-masters", "4"},
		{"run", "--out", t.TempDir(), "--bucket-keys", "-1"},
		{"run", "--out", t.TempDir(), "--bucket-keys", "2", "--workload", "semaphore"},
		{"run", "--out", t.TempDir(), "--bucket-keys", "2", "--no-fencing"},
		{"run", "--no-such-flag"},
		{"frobnicate"},
	}
	for _, args := range cases {
		if code, _, stderr := cli(args...); code != 2 || stderr == "" {
			t.Errorf("%v: exit %d, stderr %q; want 2 and a message", args, code, stderr)
		}
	}
	if code, _, _ := cli("check", write(t, `{"index":0,"process":0,"type":"done","f":"acquire","key":"k","time_ns":0}`)); code != 2 {
		t.Errorf("malformed history: exit %d, want 2", code)
	}
}

// A short real run on local redis-server processes writes its three files
// and exits with its verdict.
func TestRunWritesOutputs(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli("run", "--nemesis", "pause", "--time", "3s", "--seed", "5", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	for _, f := range []string{"history.jsonl", "results.json", "report.html"} {
		if st, err := os.Stat(filepath.Join(dir, f)); err != nil || st.Size() == 0 {
			t.Fatalf("%s: %v", f, err)
		}
	}
	if !strings.Contains(out, "verdict: valid") {
		t.Fatalf("no verdict line: %s", out)
	}
	// check agrees with run on the history it wrote.
	if code, out, _ := cli("check", filepath.Join(dir, "history.jsonl")); code != 0 || !strings.Contains(out, "verdict: valid") {
		t.Fatalf("check of the run's history: exit %d, %s", code, out)
	}
}

// --data-loss-tolerance reaches the clients and results.json: a quorum of 4
// of 5 masters, the quarantine off.
func TestRunDataLossTolerance(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli("run", "--nemesis", "pause", "--time", "3s", "--seed", "5", "--data-loss-tolerance", "1", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	b, err := os.ReadFile(filepath.Join(dir, "results.json"))
	if err != nil {
		t.Fatal(err)
	}
	var res struct {
		Tolerance    int  `json:"data_loss_tolerance"`
		Quorum       int  `json:"quorum"`
		LossMasters  int  `json:"data_loss_masters"`
		NoQuarantine bool `json:"no_quarantine"`
		Acquired     int  `json:"acquired"`
	}
	if err := json.Unmarshal(b, &res); err != nil {
		t.Fatal(err)
	}
	if res.Tolerance != 1 || res.Quorum != 4 || res.LossMasters != 1 || !res.NoQuarantine || res.Acquired == 0 {
		t.Fatalf("results.json: %+v; want tolerance 1, quorum 4, data-loss on 1 master, quarantine off, acquisitions", res)
	}
}

// --bucket-keys runs loads on keys of the workload key's fence bucket: every
// lock ok records that one bucket, the loads' keys are other keys, and the
// tokens checker compares them as one bucket.
func TestRunBucketKeysShareOneBucket(t *testing.T) {
	dir := t.TempDir()
	code, out, stderr := cli("run", "--time", "3s", "--seed", "5", "--bucket-keys", "2", "--out", dir)
	if code != 0 {
		t.Fatalf("exit %d: %s %s", code, out, stderr)
	}
	events, err := history.ReadFile(filepath.Join(dir, "history.jsonl"))
	if err != nil {
		t.Fatal(err)
	}
	buckets, oks := map[string]bool{}, map[string]int{}
	for _, e := range events {
		if e.F == history.Acquire && e.Type == history.OK {
			buckets[e.Bucket] = true
			oks[e.Key]++
		}
	}
	if len(buckets) != 1 || buckets[""] || len(oks) != 3 || oks["k"] == 0 {
		t.Fatalf("buckets %v, oks per key %v: want one bucket recorded on every ok, keys k and two loads' keys", buckets, oks)
	}
	if !strings.Contains(out, "no token twice in a key or in any of 1 fence buckets") {
		t.Fatalf("tokens line: %s", out)
	}
}
