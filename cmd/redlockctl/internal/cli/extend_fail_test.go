package cli

import (
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// slowMasters starts n masters and puts the last slow of them behind
// lateProxy: they run the extend script at once (it is loaded on them, so
// EVALSHA runs it) and answer late. env names every master, the slow ones
// by their proxy.
func slowMasters(t *testing.T, n, slow int, delay time.Duration) (*clustertest.Cluster, map[string]string) {
	t.Helper()
	c := clustertest.Start(t, n, clustertest.AOFAlways)
	urls := c.URLs()
	for i := n - slow; i < n; i++ {
		s := c.Servers[i]
		if err := extendScript.Load(t.Context(), s.Client(t)).Err(); err != nil {
			t.Fatal(err)
		}
		urls[i] = "redis://" + startLateProxy(t, s.Addr, extendScript.Hash(), delay)
	}
	return c, map[string]string{EnvMasters: strings.Join(urls, ",")}
}

// Issue 17 item 2: the slow masters run the PEXPIRE to the shorter TTL but
// answer after --timeout, so extend fails (exit 4). The key then lives on
// them for --ttl only: the handle extend prints must claim no more than
// that, and once another owner holds the key the handle is no longer valid.
// Before the fix extend printed nothing and the caller kept the old handle,
// valid for a minute while another owner held the lock.
func TestFailedExtendToAShorterTTLMovesTheHandle(t *testing.T) {
	c, env := slowMasters(t, 5, 3, 700*time.Millisecond)
	r := invoke(t, env, "", "lock", "job", "--ttl", "1m")
	r.want(t, ExitOK, "lock")
	old, err := ParseHandle(r.out)
	if err != nil {
		t.Fatal(err)
	}

	r = invoke(t, env, "", "extend", strings.TrimSpace(r.out), "--ttl", "1s", "--timeout", "500ms")
	returned := time.Now()
	r.want(t, ExitNoQuorum, "extend with 3 of 5 masters answering late")
	if !strings.Contains(r.errOut, "no quorum") {
		t.Fatalf("extend does not say why it failed:\n%s", r.errOut)
	}
	h, err := ParseHandle(r.out)
	if err != nil {
		t.Fatalf("a failed extend printed no handle: %v\nstdout %q\nstderr:\n%s", err, r.out, r.errOut)
	}
	if h.Key != old.Key || h.Value != old.Value || h.Token != old.Token {
		t.Fatalf("the printed handle is not the lease's: %+v, was %+v", h, old)
	}
	if h.ValidUntil.After(returned.Add(time.Second)) {
		t.Fatalf("after a failed extend to 1s the handle claims validity until %v, more than 1s after the command returned (%v)", h.ValidUntil, returned)
	}
	for _, s := range c.Servers[2:] {
		if p := s.Client(t).PTTL(t.Context(), "job").Val(); p > time.Second {
			t.Fatalf("master %s did not run the PEXPIRE (PTTL %v): the test shows nothing", s.Addr, p)
		}
	}

	// The key expires on the three slow masters: another owner gets it.
	r = invoke(t, env, "", "lock", "job", "--ttl", "30s", "--wait", "30s")
	r.want(t, ExitOK, "another owner's lock once the slow masters' keys expired")
	locked := time.Now()
	if h2, err := ParseHandle(r.out); err != nil || h2.Value == h.Value {
		t.Fatalf("second lock: %+v (%v)", h2, err)
	}
	if locked.Before(h.ValidUntil) {
		t.Fatalf("another owner holds the lock at %v while the printed handle claims validity until %v", locked, h.ValidUntil)
	}
}

// A failed extend that leaves no validity says the lease is dead (exit 5)
// and prints no handle: the round waited --timeout for the slow masters,
// longer than the new TTL.
func TestFailedExtendWithNoValidityLeftSaysDead(t *testing.T) {
	_, env := slowMasters(t, 5, 3, 700*time.Millisecond)
	r := invoke(t, env, "", "lock", "job", "--ttl", "1m")
	r.want(t, ExitOK, "lock")
	r = invoke(t, env, "", "extend", strings.TrimSpace(r.out), "--ttl", "300ms", "--timeout", "500ms")
	r.want(t, ExitLeaseLost, "extend to 300ms taking 500ms")
	if r.out != "" || !strings.Contains(r.errOut, "the lease is dead") {
		t.Fatalf("a dead lease: stdout %q, stderr:\n%s", r.out, r.errOut)
	}
}
