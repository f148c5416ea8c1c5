package semaphore

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// semACLPrefix starts the semaphores' line in docs/security.md.
const semACLPrefix = "ACL SETUSER quorumlock-sem "

// semACLLine is the semaphores' ACL SETUSER line of docs/security.md, word
// for word.
func semACLLine(t *testing.T) string {
	t.Helper()
	doc, err := os.ReadFile("../../docs/security.md")
	if err != nil {
		t.Fatal(err)
	}
	for _, line := range strings.Split(string(doc), "\n") {
		if strings.HasPrefix(line, semACLPrefix) {
			return line
		}
	}
	t.Fatalf("docs/security.md has no line starting with %q", semACLPrefix)
	return ""
}

// aclMasters starts n masters with the documented user and returns clients
// logged in as it, and the servers (for their admin clients).
func aclMasters(t *testing.T, n int) (*clustertest.Cluster, []redis.UniversalClient) {
	t.Helper()
	const pw = "sem-acl-password"
	c := clustertest.Start(t, n)
	t.Cleanup(c.ResumeAll)
	var out []redis.UniversalClient
	for _, s := range c.Servers {
		var args []any
		for _, w := range strings.Fields(strings.ReplaceAll(semACLLine(t), "CHANGE-ME", pw)) {
			args = append(args, w)
		}
		if err := s.Client(t).Do(context.Background(), args...).Err(); err != nil {
			t.Fatalf("%v: %v", args, err)
		}
		out = append(out, s.Client(t, func(o *redis.Options) { o.Username, o.Password = "quorumlock-sem", pw }))
	}
	return c, out
}

// Every variant (and Atomic on three masters, with restart quarantine on)
// runs its whole life as the documented least-privilege user: TryAcquire,
// busy, an Acquire woken by a release, Refresh, auto-refresh, Holders,
// Release, the limit check; Redis logs no denial but CONFIG GET (optional,
// see docs/security.md). The user cannot read other keys.
func TestACLUserRunsTheSemaphores(t *testing.T) {
	for _, tc := range bookCases {
		t.Run(tc.name, func(t *testing.T) {
			c, m := aclMasters(t, tc.masters)
			ctx := ctxFor(t, 30*time.Second)
			s, err := New(m, "api:acct:1", 2, WithVariant(tc.variant), WithTimeout(time.Second), WithAutoRefresh())
			if err != nil {
				t.Fatal(err)
			}
			defer s.Close()
			ps := mustAcquire(t, s, 2)
			if _, err := s.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
				t.Fatalf("third TryAcquire as the ACL user: %v; want ErrBusy", err)
			}
			if n, err := s.Holders(ctx); err != nil || n != 2 {
				t.Fatalf("Holders as the ACL user: %d, %v", n, err)
			}
			waited := make(chan error, 1)
			go func() {
				p, err := s.Acquire(ctx)
				if err == nil {
					err = p.Release(ctx)
				}
				waited <- err
			}()
			time.Sleep(50 * time.Millisecond) // let the waiter try once and subscribe
			if err := ps[0].Refresh(ctx); err != nil {
				t.Fatalf("Refresh as the ACL user: %v", err)
			}
			if err := ps[0].Release(ctx); err != nil {
				t.Fatalf("Release as the ACL user: %v", err)
			}
			if err := <-waited; err != nil {
				t.Fatalf("a waiting Acquire as the ACL user: %v", err)
			}
			time.Sleep(1200 * time.Millisecond) // auto-refresh keeps the other permit past its timeout
			if err := ps[1].Err(); err != nil {
				t.Fatalf("an auto-refreshed permit as the ACL user: %v", err)
			}
			if err := ps[1].Release(ctx); err != nil {
				t.Fatalf("Release as the ACL user: %v", err)
			}
			other, err := New(m, "api:acct:1", 3, WithVariant(tc.variant))
			if err != nil {
				t.Fatal(err)
			}
			defer other.Close()
			if tc.masters > 1 {
				if _, err := other.TryAcquire(ctx); !errors.Is(err, ErrInvalidArgument) {
					t.Fatalf("another limit as the ACL user: %v; want ErrInvalidArgument", err)
				}
			}
			if err := m[0].Get(ctx, "payroll").Err(); err == nil || !strings.Contains(err.Error(), "NOPERM") {
				t.Fatalf("GET payroll as the semaphore user: %v; want NOPERM", err)
			}
			for i, srv := range c.Servers {
				entries, err := srv.Client(t).Do(ctx, "ACL", "LOG").Slice()
				if err != nil {
					t.Fatal(err)
				}
				for _, e := range entries {
					d := fmt.Sprint(e)
					if !strings.Contains(d, "object:config|get") && !strings.Contains(d, "object:payroll") {
						t.Errorf("master %d: ACL LOG has a denial: %s", i, d)
					}
				}
			}
		})
	}
}
