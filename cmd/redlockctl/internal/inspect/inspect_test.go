package inspect

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"syscall"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/redlock"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func TestOwnerIDHidesTheValue(t *testing.T) {
	a, b := OwnerID("0123456789abcdef0123456789abcdef"), OwnerID("0123456789abcdef0123456789abcdee")
	if len(a) != 12 || a == b || strings.Contains("0123456789abcdef0123456789abcdef", a) || OwnerID("x") != OwnerID("x") {
		t.Fatalf("owner ids %q %q", a, b)
	}
}

func TestJudge(t *testing.T) {
	m := func(owner string, reachable bool) KeyMaster {
		return KeyMaster{Owner: owner, Reachable: reachable, PTTLms: 1000}
	}
	for _, tc := range []struct {
		name    string
		masters []KeyMaster
		verdict string
		strays  int
	}{
		{"majority", []KeyMaster{m("a", true), m("a", true), m("", true)}, VerdictHeld, 0},
		{"majority and a stray", []KeyMaster{m("a", true), m("a", true), m("a", true), m("b", true), m("", true)}, VerdictHeld, 1},
		{"free", []KeyMaster{m("", true), m("", true), m("", false)}, VerdictFree, 0},
		{"split", []KeyMaster{m("a", true), m("b", true), m("", true)}, VerdictSplit, 2},
		{"minority answered", []KeyMaster{m("", true), m("", false), m("", false)}, VerdictUnknown, 0},
	} {
		r := judge("k", tc.masters, 0)
		if r.Verdict != tc.verdict || len(r.Strays) != tc.strays {
			t.Errorf("%s: verdict %s with %d strays, want %s with %d", tc.name, r.Verdict, len(r.Strays), tc.verdict, tc.strays)
		}
	}
}

func TestDescribeNamesTheCause(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want string
	}{
		{fmt.Errorf("dial: %w", syscall.ECONNREFUSED), "connection refused"},
		{context.DeadlineExceeded, "timeout"},
		{errors.New("WRONGPASS invalid username-password pair"), "auth"},
		{errors.New("tls: failed to verify certificate"), "TLS"},
		{&redlock.MasterError{Err: redlock.ErrHeldByOther}, "held by another owner"},
		{fmt.Errorf("%w: until 10:00", redlock.ErrQuarantined), "quarantined"},
		{&redlock.MasterError{Err: fmt.Errorf("%w: dial tcp: connect: connection refused", redlock.ErrUnreachable)}, "unreachable: connection refused"},
		{&redlock.MasterError{Err: redlock.ErrKeyAbsent}, "gone"},
		{redis.ErrClosed, "unreachable"},
	} {
		if got := Describe(tc.err); !strings.Contains(got, tc.want) {
			t.Errorf("Describe(%v) = %q, want %q in it", tc.err, got, tc.want)
		}
	}
}

// miniMasters starts n miniredis masters.
func miniMasters(t *testing.T, n int) ([]*miniredis.Miniredis, []redis.UniversalClient, []string) {
	var ss []*miniredis.Miniredis
	var cs []redis.UniversalClient
	var names []string
	for range n {
		s := miniredis.RunT(t)
		c := redis.NewClient(&redis.Options{Addr: s.Addr()})
		t.Cleanup(func() { _ = c.Close() })
		ss, cs, names = append(ss, s), append(cs, c), append(names, s.Addr())
	}
	return ss, cs, names
}

func TestAuditOnEmbeddedMasters(t *testing.T) {
	ss, cs, names := miniMasters(t, 3)
	quorumValue := "0123456789abcdef0123456789abcdef"
	for _, s := range ss {
		_ = s.Set("job:7", quorumValue) // lock-like by its value; no TTL
		_ = s.Set("user:1", "alice")    // not a lock
	}
	_ = ss[0].Set(keys.Legacy("job:7"), "12")
	_ = ss[1].Set("job:8", "x")                           // lock-like only with --match
	_ = ss[0].Set("lock:blob", strings.Repeat("x", 1000)) // too big to be a lock value
	ss[1].SetTTL("job:8", time.Minute)
	rep, err := Audit(context.Background(), cs, names, AuditOptions{})
	if err != nil {
		t.Fatal(err)
	}
	if rep.Errors() != 3 || len(rep.Findings) != 3 || rep.Findings[0].Fence != 12 || rep.Masters[0].Scanned != 3 {
		t.Fatalf("audit: %+v", rep)
	}
	rep, err = Audit(context.Background(), cs, names, AuditOptions{Match: "job:*"})
	if err != nil {
		t.Fatal(err)
	}
	stray := 0
	for _, f := range rep.Findings {
		if f.Kind == KindStray && f.Key == "job:8" {
			stray++
		}
	}
	if stray != 1 {
		t.Fatalf("--match job:* finds no stray job:8: %+v", rep.Findings)
	}
	// The fix is owner-checked: a key whose value changed since the audit keeps no TTL change.
	_ = ss[2].Set("job:7", "someone-else")
	n, err := FixTTL(context.Background(), cs, rep, time.Minute)
	if err != nil || n != 2 {
		t.Fatalf("FixTTL: %d, %v; want 2 (master 2's key changed hands)", n, err)
	}
	if ss[0].TTL("job:7") != time.Minute || ss[2].TTL("job:7") != 0 {
		t.Fatalf("TTLs after the fix: %v %v", ss[0].TTL("job:7"), ss[2].TTL("job:7"))
	}
	if _, err := FixTTL(context.Background(), cs, rep, 0); err == nil {
		t.Fatal("FixTTL with a zero TTL succeeded")
	}
}
