package redlock

import (
	"context"
	"errors"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// lockBounded runs Lock with a generous deadline: a Lock that waits instead
// of giving up returns the deadline's error, which the callers tell apart.
func lockBounded(t *testing.T, c *Client, key string) (*Lease, error) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	return c.Lock(ctx, key, time.Second)
}

func wantMisconfigured(t *testing.T, what string, lease *Lease, err error, reply string) {
	t.Helper()
	if lease != nil || errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrMisconfigured) {
		t.Fatalf("%s: %v; want ErrMisconfigured at once, not the deadline", what, err)
	}
	wantRefused(t, lease, err, reply)
}

// Lock and LockAll give up at once when a majority of masters refuse the
// lock's commands for good (WRONGTYPE at the key, NOPERM for the script):
// before, Lock retried until its context ended, for ever with Background.
// A minority refusing for good still locks; a majority refusing for a
// reason that passes (OOM) keeps Lock waiting.
func TestLockStopsWhenAMajorityRefusesForGood(t *testing.T) {
	r := newRig(t, 3)
	c := r.client(t)
	for _, i := range []int{0, 1} {
		r.admin(t, i, "LPUSH", "wt", "not a lock")
	}
	lease, err := lockBounded(t, c, "wt")
	wantMisconfigured(t, "Lock", lease, err, "WRONGTYPE")
	ctx, cancel := context.WithTimeout(context.Background(), 20*time.Second)
	defer cancel()
	lease, err = c.LockAll(ctx, []string{"a-free-key", "wt"}, time.Second)
	wantMisconfigured(t, "LockAll", lease, err, "WRONGTYPE")

	// One master refusing for good: the other two are a majority.
	r.admin(t, 0, "LPUSH", "wt1", "not a lock")
	lease, err = lockBounded(t, c, "wt1")
	if err != nil {
		t.Fatalf("one master with WRONGTYPE: %v", err)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}

	// OOM on a majority passes when memory frees: Lock waits (here until its
	// short context ends) and the error is not ErrMisconfigured.
	for _, i := range []int{0, 1} {
		r.admin(t, i, "CONFIG", "SET", "maxmemory-policy", "noeviction")
		r.admin(t, i, "CONFIG", "SET", "maxmemory", "1")
	}
	short, cancelShort := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancelShort()
	lease, err = c.Lock(short, "oom", time.Second)
	if lease != nil || !errors.Is(err, context.DeadlineExceeded) || errors.Is(err, ErrMisconfigured) {
		t.Fatalf("Lock under OOM: %v; want it to wait until its context ends", err)
	}
}

// NOPERM on a majority: the user may not run the acquire script.
func TestLockStopsOnNoPerm(t *testing.T) {
	r := newRig(t, 3)
	users := make([]redis.UniversalClient, 3)
	for i, s := range r.Servers {
		rule := "+evalsha"
		if i < 2 {
			rule = "-evalsha"
		}
		r.admin(t, i, "ACL", "SETUSER", "locker", "reset", "on", ">pw", "~*", "&*", "+@all", rule, "-eval")
		users[i] = s.Client(t, func(o *redis.Options) { o.Username, o.Password = "locker", "pw" })
	}
	c, err := New(users, WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lease, err := lockBounded(t, c, "noperm")
	wantMisconfigured(t, "Lock", lease, err, "NOPERM")
	noKeyLeft(t, r, "noperm")
}

// An ACL user that may run the scripts but not a command inside them
// (here ZADD, the TTL entry of a grant): Redis 7.0 answers "ERR The user
// executing the script can't run this command", not NOPERM. It is as final:
// on two of three masters Lock gives up at once; on one it locks.
func TestLockStopsOnScriptACLDenial(t *testing.T) {
	r := newRig(t, 3)
	users := func(name string, refusing int) []redis.UniversalClient {
		out := make([]redis.UniversalClient, 3)
		for i, s := range r.Servers {
			args := []any{"ACL", "SETUSER", name, "reset", "on", ">pw", "~*", "&*", "+@all"}
			if i < refusing {
				args = append(args, "-zadd")
			}
			r.admin(t, i, args...)
			out[i] = s.Client(t, func(o *redis.Options) { o.Username, o.Password = name, "pw" })
		}
		return out
	}
	c, err := New(users("nozadd", 2), WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	lease, err := lockBounded(t, c, "denied")
	wantMisconfigured(t, "Lock", lease, err, "can't run this command")

	c1, err := New(users("nozadd1", 1), WithoutQuarantine())
	if err != nil {
		t.Fatal(err)
	}
	defer c1.Close()
	lease, err = lockBounded(t, c1, "denied1")
	if err != nil {
		t.Fatalf("one master denying ZADD to the script: %v", err)
	}
	if err := lease.Release(context.Background()); err != nil {
		t.Fatal(err)
	}
}

// One server given twice (two clients, one address): neither counts, so
// with three masters no majority is left and Lock stops at once with
// ErrMisconfigured and ErrDuplicate, naming both masters. Before, only one
// side of the pair was a refusal for good and Lock waited for ever (3 − 1
// is still a majority on paper).
func TestLockStopsWhenAServerIsGivenTwice(t *testing.T) {
	r := newRig(t, 2)
	again := redis.NewClient(&redis.Options{Addr: r.Servers[0].Addr})
	t.Cleanup(func() { _ = again.Close() })
	c, err := New([]redis.UniversalClient{r.clients[0], r.clients[1], again})
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = c.Close() })
	lease, err := lockBounded(t, c, "twice")
	if lease != nil || errors.Is(err, context.DeadlineExceeded) || !errors.Is(err, ErrMisconfigured) || !errors.Is(err, ErrDuplicate) {
		t.Fatalf("Lock with master 0 given twice: %v; want ErrMisconfigured and ErrDuplicate at once", err)
	}
	var e *Error
	if !errors.As(err, &e) {
		t.Fatalf("%T is no *Error", err)
	}
	named := map[int]bool{}
	for _, me := range e.Masters {
		var m *MasterError
		if errors.As(me, &m) && errors.Is(m, ErrDuplicate) {
			named[m.Master] = true
		}
	}
	if !named[0] || !named[2] {
		t.Fatalf("duplicate errors for masters %v; want 0 and 2: %v", named, err)
	}
}
