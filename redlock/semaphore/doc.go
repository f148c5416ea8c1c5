// Package semaphore provides counting semaphores on Redis: up to limit
// holders of a name at once ("a lock is a semaphore with a limit of 1").
//
//	sem, err := semaphore.New(masters, "api:account:42", 5)
//	permit, err := sem.Acquire(ctx)      // or TryAcquire: ErrBusy at once when full
//	defer permit.Release(ctx)
//	callTheAPI(permit.Context())
//
// Four variants (WithVariant), three of them the stages of Redis in Action,
// chapter 6.3, kept faithfully with their known bugs so that the choice is an
// informed one:
//
//   - Basic: one ZSET scored by the client's wall clock, one MULTI per
//     attempt. Fastest; a client whose clock runs ahead can have its place
//     silently taken ("stolen") by a later client with a slower clock. A
//     soft cap only (background workers, where overshooting by one for
//     milliseconds is harmless).
//   - Fair: an INCR counter orders the holders, so clock skew of a second or
//     two no longer decides; the two round trips of an attempt still race
//     and can over-admit. A soft cap only.
//   - Guarded: Fair under a short-lived lock (package redlock) on the one
//     master: the limit holds every time, for clocks skewed by less than
//     the timeout. Fit for a hard limit on one master.
//   - Atomic, the default: one Lua script per acquisition and per refresh,
//     scored with the server's TIME, with a fencing token per permit. Fit for
//     a hard external limit (a third-party connection cap, licensed seats).
//     On several independent masters it is limit Redlock slots, each taken
//     with a redlock.Client: correct while a minority of masters fails.
//
// Every variant fails fast (TryAcquire returns ErrBusy), wakes waiting
// Acquire calls by pub/sub when a permit is released, never re-acquires a
// lost permit on Refresh (ErrLost, which also matches redlock.ErrLockLost),
// and logs nothing unless given a logger. A permit that is not refreshed
// within the timeout (WithTimeout, default 10 s) is lost; WithAutoRefresh
// refreshes it every third of the timeout.
//
// docs/semaphores.md compares the variants, proves the multi-master bound,
// and gives measured figures.
package semaphore
