package cli

import (
	"bytes"
	"context"
	"os"
	"regexp"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestStatusKeyHeldByTheLibraryAndSplit(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	locks, err := redlock.New(c.Clients(t))
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	ctx := context.Background()
	lease, err := locks.TryLock(ctx, "invoice:7", time.Minute)
	if err != nil {
		t.Fatal(err)
	}
	defer lease.Release(ctx)
	value := get(t, c, "invoice:7")[0]

	r := ctl(t, c, "status", "invoice:7")
	r.want(t, ExitOK, "status invoice:7")
	owner := inspect.OwnerID(value)
	if !strings.Contains(r.out, "held by owner "+owner+" on 3 of 3 masters") || strings.Contains(r.out+r.errOut, value) {
		t.Fatalf("status of a held key must name owner %s and never the value:\n%s", owner, r.out)
	}

	// A stray key on one master only: no majority.
	if err := c.Clients(t)[1].Set(ctx, "invoice:8", "someone-elses-value", time.Minute).Err(); err != nil {
		t.Fatal(err)
	}
	r = ctl(t, c, "status", "invoice:7", "invoice:8", "nothing:here", "-o", "json")
	r.want(t, ExitOK, "status of three keys")
	j := parse[keysJSON](t, r)
	if len(j.Keys) != 3 {
		t.Fatalf("keys: %+v", j)
	}
	held, split, free := j.Keys[0], j.Keys[1], j.Keys[2]
	if held.Verdict != inspect.VerdictHeld || held.Owner != owner || held.Holders != 3 || held.Fence != uint64(lease.Token()) || held.Masters[0].PTTLms <= 0 {
		t.Fatalf("held key: %+v", held)
	}
	if split.Verdict != inspect.VerdictSplit || len(split.Strays) != 1 || split.Strays[0].Master != 1 || split.Strays[0].Owner != inspect.OwnerID("someone-elses-value") {
		t.Fatalf("stray minority key: %+v", split)
	}
	if free.Verdict != inspect.VerdictFree || free.Answered != 3 {
		t.Fatalf("free key: %+v", free)
	}
	r = ctl(t, c, "status", "invoice:8")
	if !strings.Contains(r.out, "split: no owner holds a majority") || !strings.Contains(r.out, "stray: master 1") {
		t.Fatalf("status of a split key:\n%s", r.out)
	}
}

func TestLockExtendUnlockByHandleAcrossInvocations(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "lock", "deploy:prod", "--ttl", "5s")
	r.want(t, ExitOK, "lock")
	handle := strings.TrimSpace(r.out)
	h, err := ParseHandle(handle)
	if err != nil {
		t.Fatalf("lock printed %q: %v", r.out, err)
	}
	value := get(t, c, "deploy:prod")
	if h.Value != value[0] || h.Key != "deploy:prod" || h.Token == 0 || time.Until(h.ValidUntil) <= 0 {
		t.Fatalf("handle %+v does not match the masters' value", h)
	}
	if strings.Contains(r.errOut, h.Value) || strings.Contains(r.errOut, handle) {
		t.Fatalf("the secret reached stderr: %q", r.errOut)
	}

	// Another owner is refused: exit 3, saying who holds it.
	r = ctl(t, c, "lock", "deploy:prod", "--ttl", "5s")
	r.want(t, ExitNotAcquired, "lock of a held key")
	if !strings.Contains(r.errOut, "held by another owner") {
		t.Fatalf("lock of a held key does not say so:\n%s", r.errOut)
	}

	r = ctl(t, c, "extend", handle, "--ttl", "30s", "-o", "json")
	r.want(t, ExitOK, "extend")
	lj := parse[leaseJSON](t, r)
	h2, err := ParseHandle(lj.Handle)
	if err != nil || lj.Token != h.Token || lj.Owner != inspect.OwnerID(h.Value) || !h2.ValidUntil.After(h.ValidUntil) {
		t.Fatalf("extend -o json: %+v (%v)", lj, err)
	}
	for i, p := range pttls(t, c, "deploy:prod") {
		if p <= 6*time.Second {
			t.Fatalf("master %d: PTTL %v after extend --ttl 30s", i, p)
		}
	}

	r = ctl(t, c, "unlock", lj.Handle, "-o", "json")
	r.want(t, ExitOK, "unlock")
	if u := parse[unlockJSON](t, r); u.Released != 3 || u.Quorum != 2 {
		t.Fatalf("unlock -o json: %+v", u)
	}
	if v := get(t, c, "deploy:prod"); v[0]+v[1]+v[2] != "" {
		t.Fatalf("keys left after unlock: %q", v)
	}
	// The lease is gone: extend and unlock again are "lease lost".
	ctl(t, c, "unlock", lj.Handle).want(t, ExitLeaseLost, "second unlock")
	ctl(t, c, "extend", lj.Handle, "--ttl", "5s").want(t, ExitLeaseLost, "extend after unlock")

	// The key was taken over: unlock must not delete the new owner's key.
	r = ctl(t, c, "lock", "deploy:prod", "--ttl", "30s")
	r.want(t, ExitOK, "lock again")
	ctl(t, c, "unlock", handle).want(t, ExitLeaseLost, "unlock with an old handle")
	if v := get(t, c, "deploy:prod"); v[0] == "" || v[0] == h.Value {
		t.Fatalf("an old handle removed the new owner's key: %q", v)
	}

	// A handle for other masters is refused as a usage error.
	other := clustertest.Start(t, 3, clustertest.AOFAlways)
	ctl(t, other, "unlock", strings.TrimSpace(r.out)).want(t, ExitUsage, "unlock on other masters")
}

func TestLockWaitsForRelease(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "lock", "k", "--ttl", "2s")
	r.want(t, ExitOK, "lock")
	// The first lease is never released: the second waits for its expiry.
	r = ctl(t, c, "lock", "k", "--ttl", "5s", "--wait", "10s")
	r.want(t, ExitOK, "lock --wait")
	h, err := ParseHandle(r.out)
	if err != nil {
		t.Fatal(err)
	}
	ctl(t, c, "unlock", strings.TrimSpace(r.out)).want(t, ExitOK, "unlock")
	if h.Token < 2 {
		t.Fatalf("second holder's token %d is not above the first's", h.Token)
	}
}

func TestNoQuorumExit4WithThreeOfFivePaused(t *testing.T) {
	c := clustertest.Start(t, 5, clustertest.AOFAlways)
	defer c.ResumeAll()
	r := ctl(t, c, "lock", "k", "--ttl", "2s")
	r.want(t, ExitOK, "lock with every master up")
	handle := strings.TrimSpace(r.out)
	for _, s := range c.Servers[:3] {
		if err := s.Pause(); err != nil {
			t.Fatal(err)
		}
	}
	args := []string{"--timeout", "300ms"}
	r = ctl(t, c, append(args, "lock", "other", "--ttl", "2s")...)
	r.want(t, ExitNoQuorum, "lock with 3 of 5 paused")
	if !regexp.MustCompile(`(?s)master 0 \([^)]*\): unreachable.*master 1 \([^)]*\): unreachable.*master 2 \([^)]*\): unreachable`).MatchString(r.errOut) {
		t.Fatalf("lock without quorum does not say which masters timed out:\n%s", r.errOut)
	}
	ctl(t, c, append(args, "status")...).want(t, ExitNoQuorum, "status with 3 of 5 paused")
	ctl(t, c, append(args, "status", "k")...).want(t, ExitNoQuorum, "status k with 3 of 5 paused")
	ctl(t, c, append(args, "extend", handle, "--ttl", "2s")...).want(t, ExitNoQuorum, "extend with 3 of 5 paused")
	ctl(t, c, append(args, "run", "--key", "other", "--ttl", "2s", "--", "true")...).want(t, ExitNoQuorum, "run with 3 of 5 paused")
	ctl(t, c, append(args, "run", "--key", "other", "--ttl", "2s", "--conflict-exit-code", "0", "--", "false")...).want(t, 0, "run --conflict-exit-code 0")
}

func TestSignalStopsAWaitingLock(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "lock", "k", "--ttl", "30s")
	r.want(t, ExitOK, "lock")
	defer ctl(t, c, "unlock", strings.TrimSpace(r.out))

	sigs := make(chan os.Signal, 1)
	done := make(chan int, 1)
	var out, errb bytes.Buffer
	go func() {
		done <- Execute(context.Background(), []string{"lock", "k", "--ttl", "5s", "--wait", "1m"}, Env{
			Stdout: &out, Stderr: &errb, Signals: sigs,
			Getenv: func(k string) string { return map[string]string{EnvMasters: strings.Join(c.URLs(), ",")}[k] },
		})
	}()
	sigs <- os.Interrupt // delivered whenever the command reads it: before or while it waits
	select {
	case code := <-done:
		if code != ExitFailed || !strings.Contains(errb.String(), "canceled") {
			t.Fatalf("interrupted lock: exit %d, stderr %q; want 1, canceled", code, errb.String())
		}
	case <-time.After(30 * time.Second):
		t.Fatal("SIGINT did not stop a waiting lock")
	}
}

func TestExpiredHandle(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "lock", "k", "--ttl", "30s")
	r.want(t, ExitOK, "lock")
	h, err := ParseHandle(r.out)
	if err != nil {
		t.Fatal(err)
	}
	h.ValidUntil = time.Now().Add(-time.Second) // as if the holder slept past its validity
	old := h.Encode()
	ctl(t, c, "extend", old, "--ttl", "5m").want(t, ExitLeaseLost, "extend past validity")
	for i, p := range pttls(t, c, "k") {
		if p > 30*time.Second {
			t.Fatalf("master %d: extend past validity renewed the key (PTTL %v)", i, p)
		}
	}
	r = ctl(t, c, "unlock", old)
	r.want(t, ExitLeaseLost, "unlock past validity")
	if !strings.Contains(r.errOut, "validity ended") {
		t.Fatalf("unlock past validity does not say why:\n%s", r.errOut)
	}
	if v := get(t, c, "k"); v[0]+v[1]+v[2] != "" {
		t.Fatalf("unlock past validity left its keys: %q", v)
	}
}
