package redlock

import (
	"context"
	"fmt"
	"strings"
	"testing"
	"time"
)

// A lease released at once after TryLock: the SET on the master that had
// not answered when the majority did may run after the release's delete
// (the two go out on different connections). Whether that SET had been
// answered must be judged from before the delete was sent, or its "not
// there" is taken as proof and the late key stays until its TTL (found by
// FuzzKey: about one lease in a thousand on three real masters).
func TestReleaseRightAfterLockLeavesNoKey(t *testing.T) {
	mr := newRig(t, 3, onMiniredis())
	ms, cs := mr.mini, mr.clients
	c := miniClient(t, cs)
	ctx := context.Background()
	const n = 600
	for k := range n {
		lease, err := c.TryLock(ctx, fmt.Sprintf("race:%d", k), time.Minute)
		if err != nil {
			t.Fatal(err)
		}
		if err := lease.Release(ctx); err != nil {
			t.Fatal(err)
		}
	}
	eventually(t, 10*time.Second, "no lock key left", func() bool {
		for _, m := range ms {
			for _, k := range m.Keys() {
				if strings.HasPrefix(k, "race:") {
					return false
				}
			}
		}
		return true
	})
}
