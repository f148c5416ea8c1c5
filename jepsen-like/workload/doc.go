// Package workload is the client side of a jepsen-like run: a Process takes
// a lock with redlock, works while it holds it, and releases it, recording
// every operation in the history.
//
//   - lock: acquire, hold a while, release.
//   - register: acquire, read the register and write it through a fenced
//     store with the lease's token, release. A process told to pause (the
//     client-pause nemesis) stops after its write until a TTL past its
//     validity, then writes again with its old token, like a holder coming
//     back from a long GC pause.
//   - semaphore: acquire a permit of a counting semaphore (redlock/semaphore,
//     the multi-master Atomic variant: Redlock slots on every master), hold a
//     while, release. Acquires carry value "limit=N".
//
// With fencing off (plain Redlock) leases carry no token; the process then
// uses the order of its acquisition among all processes (HarnessToken) as
// the token of its writes, so that the checker can still tell a stale write
// from a fresh one, and the store it writes to checks nothing.
package workload
