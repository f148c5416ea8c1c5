package nemesis

import (
	"context"
	"time"
)

// SetLeaseTTL records the long lease's TTL asked of slot s.
func (f *fake) SetLeaseTTL(s int, ttl time.Duration) { f.log("lease ttl c%d %v", s, ttl) }

// LambdaEntry answers as if one grant of ttl, at the first call, wrote the
// entry (now + 2 ttl) on every master.
func (f *fake) LambdaEntry(_ context.Context, i int, ttl time.Duration) (time.Time, bool) {
	f.mu.Lock()
	defer f.mu.Unlock()
	if f.entry.IsZero() {
		f.entry = time.Now().Add(2 * ttl)
	}
	return f.entry, true
}
