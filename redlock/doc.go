// Package redlock takes Redlock locks on independent Redis masters, with
// fencing tokens and restart safety (docs/design.md, docs/safety.md).
//
//	locks, err := redlock.New(masters) // one go-redis client per master
//	if err != nil {
//		return err
//	}
//	defer locks.Close()
//	lease, err := locks.Lock(ctx, "invoice:7", 10*time.Second, redlock.WithAutoExtend())
//	if err != nil {
//		return err // errors.Is(err, redlock.ErrNotAcquired), ErrNoQuorum, ctx.Err()
//	}
//	defer lease.Release(ctx)
//	return store.Write(lease.Context(), "invoice:7", lease.Token(), holder, data)
package redlock
