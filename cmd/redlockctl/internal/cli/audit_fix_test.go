package cli

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// Issue 17 item 4: audit --fix-ttl gave a TTL to every key whose name
// contains "lock": the semaphores' counters, limits and slots (all under
// "quorumlock-sem:"), and application keys such as chain:block:height and
// config:clock-skew-ms, which then expired. Only a key proven to be a
// quorumlock lock key (a lock value of the library on a quorum of masters)
// may be fixed; everything else keeps no TTL and its value, even with
// --match '*'. Issue 20: the report printed is the one from after the fix,
// and fencing counters without a lock key are said once, as a count.
func TestAuditFixTTLTouchesOnlyProvenLockKeys(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	ctx := context.Background()
	rcs := c.Clients(t)
	const lockValue = "0123456789abcdef0123456789abcdef"
	untouchable := map[string]string{ // key -> value, on every master
		"chain:block:height":                      "845123",
		"config:clock-skew-ms":                    "5",
		"lock:legacy-tool":                        "holder-1", // a lock of another tool, maybe: a guess
		semaphore.LimitKey("jobs"):                "2",
		"quorumlock-sem:{jobs}:counter":           "41",
		"quorumlock-sem:{jobs}:fence":             "7",
		semaphore.SlotKey("jobs", 0):              "fedcba9876543210fedcba9876543210", // a lock value, but the library's key
		keys.Bucket(5):                            "17",
		keys.SyncPrefix + "n1":                    lockValue,
		keys.Legacy(semaphore.SlotKey("jobs", 0)): "3",
	}
	for _, rc := range rcs {
		for k, v := range untouchable {
			if err := rc.Set(ctx, k, v, 0).Err(); err != nil {
				t.Fatal(err)
			}
		}
		if err := rc.Set(ctx, "job:42", lockValue, 0).Err(); err != nil { // a lock left without a TTL
			t.Fatal(err)
		}
	}
	// A value that looks like a lock's on one master only: an MD5, say.
	md5ish := "d41d8cd98f00b204e9800998ecf8427e"
	if err := rcs[0].Set(ctx, "user:7:blocklist-md5", md5ish, 0).Err(); err != nil {
		t.Fatal(err)
	}
	// Fencing counters of older clients, without lock keys.
	for i := range 5 {
		if err := rcs[0].Set(ctx, keys.Legacy(fmt.Sprintf("old:%d", i)), "1", 0).Err(); err != nil {
			t.Fatal(err)
		}
	}

	r := ctl(t, c, "audit", "--fix-ttl", "1m", "--yes")
	r.want(t, ExitOK, "audit --fix-ttl --yes (only guesses left)")
	for i, rc := range rcs {
		for k, v := range untouchable {
			if got, _ := rc.Get(ctx, k).Result(); got != v {
				t.Errorf("master %d: %s = %q after --fix-ttl, was %q", i, k, got, v)
			}
			if p := rc.PTTL(ctx, k).Val(); p != -1 {
				t.Errorf("master %d: %s got a TTL (%v) from --fix-ttl: not a proven lock key", i, k, p)
			}
		}
	}
	if p := rcs[0].PTTL(ctx, "user:7:blocklist-md5").Val(); p != -1 {
		t.Errorf("user:7:blocklist-md5 got a TTL (%v): a lock-like value on 1 of 3 masters proves nothing", p)
	}
	for i, p := range pttls(t, c, "job:42") {
		if p <= 50*time.Second || p > time.Minute {
			t.Errorf("master %d: the proven lock key job:42 has PTTL %v after --fix-ttl 1m", i, p)
		}
	}
	// The report is the one from after the fix: job:42 is no error any more.
	if strings.Contains(r.out, "job:42") || strings.Contains(r.out, "ERROR") {
		t.Errorf("audit --fix-ttl --yes printed the report from before the fix:\n%s", r.out)
	}
	if !strings.Contains(r.out, "chain:block:height on master 0 has no TTL and may be a lock") {
		t.Errorf("the guess is not reported:\n%s", r.out)
	}
	if n := strings.Count(r.out, "without a lock key"); n != 1 || !strings.Contains(r.out, "5 fencing counter(s) without a lock key") {
		t.Errorf("counters without a lock key said %d times (want once, as a count):\n%s", n, r.out)
	}
	for _, k := range []string{"quorumlock-sem:", "quorumlock:"} {
		if strings.Contains(r.out, k) {
			t.Errorf("the library's own key %s... is reported:\n%s", k, r.out)
		}
	}

	// --match makes every key it matches a lock to report, never to fix.
	r = ctl(t, c, "audit", "--match", "*", "--fix-ttl", "1m", "--yes", "-o", "json")
	r.want(t, ExitOK, "audit --match '*' --fix-ttl --yes")
	j := parse[auditJSON](t, r)
	if j.Fixed != 0 || j.Errors != 0 {
		t.Errorf("audit --match '*' --fix-ttl: fixed %d, errors %d; want 0, 0", j.Fixed, j.Errors)
	}
	counterOnly := 0
	for _, f := range j.Findings {
		if f.Kind == "counter-only" {
			counterOnly++
		}
	}
	if counterOnly != 5 {
		t.Errorf("-o json lists %d counter-only findings, want one per key (5)", counterOnly)
	}
	for i, rc := range rcs {
		for _, k := range []string{"chain:block:height", "config:clock-skew-ms", "lock:legacy-tool"} {
			if p := rc.PTTL(ctx, k).Val(); p != -1 {
				t.Errorf("master %d: %s got a TTL (%v) from --match '*' --fix-ttl", i, k, p)
			}
		}
	}
}
