// Package redlock acquires locks on a majority of independent Redis masters
// (the Redlock algorithm), with fencing tokens and restart quarantine.
//
// A Client is built over the caller's go-redis clients, one per master:
//
//	locks, err := redlock.New(masters) // restart quarantine on, by default
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
//
// One attempt sends SET key value NX PX ttl (in a script that also reads the
// key's fencing counter) to every master in parallel, returns as soon as a
// majority granted or a majority became impossible, writes the new fencing
// token back to that majority, and holds the lock only if the remaining
// validity, ttl − elapsed − (ttl·drift + 2 ms) on the monotonic clock, is
// positive. On failure it deletes its key, owner-checked, on every master
// that may hold it, including masters that answer only later.
//
// A Lease ends when it is released, when its validity runs out, or when
// auto-extension fails; Done and Context report it, and Extend and Release
// of a lost lease return ErrLockLost. Tokens of successive holders of a key
// only grow (docs/fencing.md), so a store that checks them (package fencing)
// rejects a holder that was paused past its lease. Lease.State and
// Client.Resume hand a held lease to another process.
//
// Restart quarantine: a master that lost its data (no epoch marker, or a
// new one), a promoted replica, or a master without appendfsync always that
// restarted or is younger than the longest TTL in use, does not count by
// itself until that TTL has passed and its fencing counters were raised from
// the other masters (WithQuarantine, Client.Health). A round in which every
// master granted counts them all: a live lease of another owner would still
// be on at least one master, which would have refused. That is why five
// masters started a second ago lock at once.
//
// Every failure says what each master was: unreachable (and why), not
// waited for, held by another owner, young, restarted, lost its data,
// promoted, raising counters; see MasterError and the per-master sentinels.
//
// docs/design.md describes the implementation, docs/safety.md the
// assumptions under which mutual exclusion holds.
package redlock
