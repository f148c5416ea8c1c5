package semaphore

import (
	"errors"
	"testing"
	"time"
)

// Names chosen to collide under a layout of prefix + name + suffix: a name
// that is another's name plus a suffix, names holding the separators, the
// braces of the hash tag and a slot suffix.
var trickyNames = []string{
	"jobs", "jobs:owner", "jobs:counter", "jobs:guard", "jobs:tokens", "jobs:fence", "jobs:released",
	"jobs:limit", "jobs:slot:0", "jobs:slot", "jobs}", "{jobs", "{jobs}", "jobs}:owner", "}", "{", ":", "{}",
	"a}:slot:1", "a", "a}", "a}:slot:1}", "quorumlock-sem:jobs", "",
}

// Every key and channel of every name is distinct from every other name's:
// the layout is injective (the name sits between "{" and the last "}", and
// no suffix holds a "}").
func TestKeyLayoutNeverCollides(t *testing.T) {
	seen := map[string]string{}
	add := func(name, what, key string) {
		if prev, ok := seen[key]; ok {
			t.Errorf("%q is both %s and %s of %q", key, prev, what, name)
		}
		seen[key] = what + " of " + name
	}
	for _, n := range trickyNames {
		k := keysFor(n)
		for what, key := range map[string]string{
			"holders": k.holders, "owner": k.owner, "counter": k.counter, "guard": k.guard,
			"tokens": k.tokens, "fence": k.fence, "channel": k.channel, "limit": k.limit,
		} {
			add(n, what, key)
		}
		for i := range 12 {
			add(n, "slot", slotKey(n, i))
		}
	}
}

// The collisions the old layout (prefix + name + suffix) allowed, on a real
// redis-server: the Fair/Guarded semaphore "jobs" kept its owner ZSET where
// the Atomic semaphore "jobs:owner" kept its holders. Guarded's ZINTERSTORE
// then wiped Atomic's entries (limit 1, two valid permits), and Atomic's
// expiry sweep dropped Guarded's owner entries (limit 1, two holders).
func TestNamesThatCollidedUnderTheOldLayout(t *testing.T) {
	t.Run("Guarded's ZINTERSTORE and Atomic's holders", func(t *testing.T) {
		_, m := realMasters(t, 1)
		atomic := newSem(t, m, "jobs:owner", 1)
		guarded := newSem(t, m, "jobs", 1, WithVariant(Guarded))
		ctx := ctxFor(t, 10*time.Second)
		p := mustAcquire(t, atomic, 1)
		defer releaseAll(t, p)
		g := mustAcquire(t, guarded, 1) // its own semaphore: a place is free
		defer releaseAll(t, g)
		if q, err := atomic.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
			if err == nil {
				_ = q.Release(ctx)
			}
			t.Fatalf("a second permit of the limit-1 Atomic %q after Guarded %q acquired: %v; want ErrBusy", "jobs:owner", "jobs", err)
		}
	})
	t.Run("Atomic's sweep and Guarded's owner entries", func(t *testing.T) {
		_, m := realMasters(t, 1)
		guarded := newSem(t, m, "jobs", 1, WithVariant(Guarded))
		atomic := newSem(t, m, "jobs:owner", 1)
		ctx := ctxFor(t, 10*time.Second)
		g := mustAcquire(t, guarded, 1)
		defer releaseAll(t, g)
		p := mustAcquire(t, atomic, 1) // its own semaphore: a place is free
		defer releaseAll(t, p)
		if q, err := guarded.TryAcquire(ctx); !errors.Is(err, ErrBusy) {
			if err == nil {
				_ = q.Release(ctx)
			}
			t.Fatalf("a second permit of the limit-1 Guarded %q after Atomic %q acquired: %v; want ErrBusy", "jobs", "jobs:owner", err)
		}
		if n := believed(t, g); n != 1 {
			t.Fatalf("Guarded's holder lost its place to Atomic's sweep (%d of 1 believed held)", n)
		}
	})
}
