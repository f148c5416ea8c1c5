package semaphore

import (
	"errors"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// A permit of a semaphore on several masters, lost because its place's key
// was deleted on every master: Refresh's error speaks of the permit and its
// place, never of a lock, a lease or the slot's key, and still matches
// ErrLost and redlock.ErrLockLost.
func TestSlotErrorsSpeakOfPermits(t *testing.T) {
	_, m := realMasters(t, 3)
	ctx := ctxFor(t, 20*time.Second)
	s, err := New(m, "exports", 2, WithTimeout(5*time.Second))
	if err != nil {
		t.Fatal(err)
	}
	defer s.Close()
	p, err := s.TryAcquire(ctx)
	if err != nil {
		t.Fatal(err)
	}
	for _, rc := range m {
		if err := rc.Del(ctx, SlotKey("exports", p.Slot())).Err(); err != nil {
			t.Fatal(err)
		}
	}
	err = p.Refresh(ctx)
	if !errors.Is(err, ErrLost) || !errors.Is(err, redlock.ErrLockLost) {
		t.Fatalf("Refresh of a permit whose place is gone: %v; want ErrLost (and redlock.ErrLockLost)", err)
	}
	msg := err.Error()
	for _, word := range []string{"lock", "lease", "quorumlock-sem"} {
		if strings.Contains(msg, word) {
			t.Fatalf("Refresh's error speaks of %q: %s", word, msg)
		}
	}
	if !strings.Contains(msg, `semaphore "exports": refresh of place`) || !strings.Contains(msg, "permit lost") {
		t.Fatalf("Refresh's error: %s", msg)
	}
	if err := p.Release(ctx); !errors.Is(err, ErrReleased) && !errors.Is(err, ErrLost) {
		t.Fatalf("Release after the loss: %v", err)
	}
	if got := ErrReleased.Error(); got != "semaphore: permit released" || !errors.Is(ErrReleased, redlock.ErrReleased) {
		t.Fatalf("ErrReleased reads %q; want the semaphore's words, matching redlock.ErrReleased", got)
	}
}
