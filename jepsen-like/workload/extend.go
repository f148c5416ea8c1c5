package workload

import (
	"context"
	"time"

	"github.com/quorumlock/quorumlock/redlock"
)

// actMargin is how long before its validity ends a lingering holder makes
// its last move: the holder acts right up to its deadline, as a user's
// code that trusts ValidUntil does.
const actMargin = 2 * time.Millisecond

// extend extends a lock lease for ttl (shorter than what is left: the
// holder needs less time now) and returns its deadline afterwards, never
// later than validUntil (the acquire's, the end of the hold the history
// records); a semaphore permit is not extended. Whether it succeeded or
// failed, the lease's ValidUntil says how long the holder may still act: a
// failed extend may have shortened it, since some masters may run the key
// on the new TTL.
func (p *Process) extend(ctx context.Context, h hold, ttl time.Duration, validUntil time.Time) time.Time {
	lease, ok := h.(*redlock.Lease)
	if !ok {
		return validUntil
	}
	ectx, cancel := context.WithTimeout(ctx, p.TTL)
	_ = lease.Extend(ectx, ttl.Round(time.Millisecond)) // redlock takes whole milliseconds
	cancel()
	if v := lease.ValidUntil(); v.Before(validUntil) {
		return v
	}
	return validUntil
}

// actUntil holds until just before validUntil and then, in the register
// workload, writes once more: the holder's last act under the lock.
func (p *Process) actUntil(ctx context.Context, token uint64, validUntil time.Time) {
	time.Sleep(time.Until(validUntil) - actMargin)
	if p.Workload == Register && time.Now().Before(validUntil) {
		p.write(ctx, token)
	}
}
