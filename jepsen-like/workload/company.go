package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// Company are Hooks that may send a slot's lock acquisition to the masters
// in one call with other acquisitions of its Client (a redlock Client
// merges neighbouring acquires into one call of a script for many locks:
// redlock/merge.go), so that the faults try that script's rules too, not
// only those of a lone acquire (restart-long's candidate).
type Company interface {
	// Accompany takes the lock, of TTL ttl: with lock (which waits) when
	// slot's acquisitions go alone; else with try (one attempt), again and
	// again, each attempt with company (it then takes other keys through c
	// around it), so that the attempt that takes the lock went merged.
	Accompany(ctx context.Context, slot int, c *redlock.Client, ttl time.Duration, lock, try func(context.Context) (*redlock.Lease, error)) (*redlock.Lease, error)
}

// lock takes the process's lock for ttl, in company when the hooks ask.
func (p *Process) lock(ctx context.Context, ttl time.Duration) (*redlock.Lease, error) {
	lock := func(ctx context.Context) (*redlock.Lease, error) { return p.Client.Lock(ctx, p.Key, ttl) }
	if h, ok := p.Hooks.(Company); ok {
		try := func(ctx context.Context) (*redlock.Lease, error) { return p.Client.TryLock(ctx, p.Key, ttl) }
		return h.Accompany(ctx, p.Slot, p.Client, ttl, lock, try)
	}
	return lock(ctx)
}
