// Package redlock acquires locks on a majority of independent Redis masters
// (the Redlock algorithm), with fencing tokens and restart quarantine.
//
// A Client is built over the caller's go-redis clients, one per master:
//
//	locks, err := redlock.New(masters)
//	lease, err := locks.Lock(ctx, "invoice:7", 10*time.Second)
//	defer lease.Release(ctx)
//	store.Write(lease.Context(), "invoice:7", lease.Token(), holder, data)
//
// One attempt sends SET key value NX PX ttl (in a script that also reads the
// key's fencing counter) to every master in parallel, returns as soon as a
// majority granted or a majority became impossible, writes the new fencing
// token back to that majority, and holds the lock only if the remaining
// validity, ttl − elapsed − (ttl·drift + 2 ms) on the monotonic clock, is
// positive. On failure it deletes its key, owner-checked, on every master,
// including masters that answer only later.
//
// A Lease ends when it is released, when its validity runs out, or when
// auto-extension fails; Done and Context report it, and Extend and Release
// of a lost lease return ErrLockLost. Tokens of successive holders of a key
// only grow (docs/fencing.md), so a store that checks them (package fencing)
// rejects a holder that was paused past its lease.
//
// A master that restarted without appendfsync always, or lost its data, does
// not vote until the longest TTL in use has passed and its fencing counters
// were raised from the other masters (WithQuarantine, Client.Health).
//
// docs/design.md describes the implementation, docs/safety.md the
// assumptions under which mutual exclusion holds.
package redlock
