package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// sem on three real masters, across invocations: two places of a limit-2
// semaphore are taken, a third acquire is busy (exit 3), status counts them,
// refresh and release work by handle, and a released handle is lost (5).
func TestSemAcrossInvocations(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	var handles []string
	for range 2 {
		r := ctl(t, c, "sem", "acquire", "exports", "--limit", "2", "--ttl", "10s")
		r.want(t, ExitOK, "sem acquire")
		handles = append(handles, strings.TrimSpace(r.out))
	}
	h, err := ParseHandle(handles[0])
	if err != nil || (h.Key != semaphore.SlotKey("exports", 0) && h.Key != semaphore.SlotKey("exports", 1)) || h.Token == 0 {
		t.Fatalf("sem acquire printed %q: %+v, %v", handles[0], h, err)
	}
	if strings.Contains(ctl(t, c, "sem", "status", "exports", "--limit", "2").errOut, h.Value) {
		t.Fatal("the place's secret value reached stderr")
	}
	ctl(t, c, "sem", "acquire", "exports", "--limit", "2").want(t, ExitNotAcquired, "third acquire of a limit-2 semaphore")

	r := ctl(t, c, "sem", "status", "exports", "--limit", "2", "-o", "json")
	r.want(t, ExitOK, "sem status")
	if st := parse[semStatusJSON](t, r); st.Holders != 2 || st.Free != 0 || st.Limit != 2 || st.Name != "exports" {
		t.Fatalf("sem status: %+v", st)
	}
	r = ctl(t, c, "sem", "refresh", "exports", handles[1], "--limit", "2", "--ttl", "20s")
	r.want(t, ExitOK, "sem refresh")
	ctl(t, c, "sem", "release", "exports", handles[0], "--limit", "2").want(t, ExitOK, "sem release")
	ctl(t, c, "sem", "release", "exports", handles[0], "--limit", "2").want(t, ExitLeaseLost, "second release of a place")
	ctl(t, c, "sem", "refresh", "exports", handles[0], "--limit", "2").want(t, ExitLeaseLost, "refresh of a released place")
	ctl(t, c, "sem", "release", "other", handles[1], "--limit", "2").want(t, ExitUsage, "a handle of another semaphore")
	r = ctl(t, c, "sem", "status", "exports", "--limit", "2")
	r.want(t, ExitOK, "sem status")
	if !strings.Contains(r.out, "1 of 2 places held") {
		t.Fatalf("sem status after one release: %q", r.out)
	}
	ctl(t, c, "sem", "acquire", "exports", "--limit", "0").want(t, ExitUsage, "--limit 0")
}

// `sem acquire cap --limit 1` and then `--limit 2` on the same semaphore:
// the second is refused (exit 2) naming both limits, and takes no place.
func TestSemLimitMismatchIsRefused(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)
	r := ctl(t, c, "sem", "acquire", "cap", "--limit", "1", "--ttl", "10s")
	r.want(t, ExitOK, "sem acquire --limit 1")
	defer ctl(t, c, "sem", "release", "cap", strings.TrimSpace(r.out), "--limit", "1")
	r = ctl(t, c, "sem", "acquire", "cap", "--limit", "2", "--ttl", "10s")
	r.want(t, ExitUsage, "sem acquire --limit 2 while a limit-1 place is held")
	if !strings.Contains(r.errOut, "limit 2") || !strings.Contains(r.errOut, "limit 1") || r.out != "" {
		t.Fatalf("sem acquire with another limit: stdout %q, stderr %q; want no handle and both limits named", r.out, r.errOut)
	}
	ctl(t, c, "sem", "status", "cap", "--limit", "2").want(t, ExitUsage, "sem status with another limit")
	ctl(t, c, "sem", "acquire", "cap", "--limit", "1").want(t, ExitNotAcquired, "a second place of the limit-1 semaphore")
}
