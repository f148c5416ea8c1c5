// Package redlock takes locks on a quorum of independent Redis masters
// (Redlock); each lease carries a fencing token that grows across holders.
//
//	locks, err := redlock.New(masters) // one go-redis client per master; then defer locks.Close()
//	lease, err := locks.Lock(ctx, "invoice:7", 10*time.Second, redlock.WithAutoExtend())
//	if err != nil {
//		return err // errors.Is(err, redlock.ErrNotAcquired), ErrNoQuorum, ctx.Err()
//	}
//	defer lease.Release(ctx)
//	return store.Write(lease.Context(), "invoice:7", lease.Token(), holder, data)
//
// A restarted master counts again once proven whole (restart detection, the
// default), or never needs detecting (WithDataLossTolerance). docs/design.md
// walks one attempt; docs/safety.md and docs/fencing.md give the rules.
package redlock
