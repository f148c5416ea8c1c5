package redlock

import (
	"context"
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// FuzzKey: any key name (binary, very long, empty, the reserved prefix) is
// either locked, stored as given on a majority, released and gone, or
// refused with ErrInvalidArgument naming the problem; never a panic.
func FuzzKey(f *testing.F) {
	for _, k := range []string{
		"job", "", " ", keys.Prefix, keys.Prefix + "fence:x", "quorumlock", "QUORUMLOCK:x",
		"\x00", "a\x00b", "\xff\xfe", "ключ", "{tag}", "*", "a b\r\n", strings.Repeat("k", 1<<16),
	} {
		f.Add(k)
	}
	r := newRig(f, 3, onMiniredis())
	servers, clients := r.mini, r.clients
	c, err := New(clients, WithoutQuarantine(), WithMasterTimeout(time.Second))
	if err != nil {
		f.Fatal(err)
	}
	f.Cleanup(func() { _ = c.Close() })
	ctx := context.Background()
	f.Fuzz(func(t *testing.T, key string) {
		lease, err := c.TryLock(ctx, key, 5*time.Second)
		if err != nil {
			if !errors.Is(err, ErrInvalidArgument) || !(key == "" || strings.HasPrefix(key, keys.Prefix)) {
				t.Fatalf("TryLock(%q) = %v; want a lease, or ErrInvalidArgument for an empty or reserved key", key, err)
			}
			if !strings.Contains(err.Error(), "key") {
				t.Fatalf("TryLock(%q): %v does not say what is wrong", key, err)
			}
			return
		}
		if lease.Key() != key {
			t.Fatalf("lease key %q, want %q", lease.Key(), key)
		}
		held := 0
		for _, m := range servers {
			if m.Exists(key) {
				held++
			}
		}
		if held < c.Quorum() {
			t.Fatalf("key %q on %d masters, want at least %d", key, held, c.Quorum())
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatalf("Release(%q): %v", key, err)
		}
		// Release returns once a majority confirmed; the last delete may
		// still be on its way.
		eventually(t, 5*time.Second, "no key left after Release", func() bool {
			for _, m := range servers {
				if m.Exists(key) {
					return false
				}
			}
			return true
		})
	})
}
