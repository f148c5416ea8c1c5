// Package generator turns a seed into the schedule of a jepsen-like run:
// which fault starts when, on which masters and client slots, for how long,
// and how long each client process lives before it leaves and a fresh one
// joins its slot. The same configuration and seed always give the same
// schedule; what the servers and clients then do is timing, recorded in the
// history.
//
// Faults run one at a time, separated by quiet gaps. Faults that lose or
// move a master's data (restart, restart-aof, restart-delayed, flush,
// failover, clock-jump) are targeted episodes: every client is first cut off
// from a minority of masters so that the next holder holds the lock on a bare
// majority S, then a master of S suffers the fault while that holder still
// holds, and the other clients are replaced by fresh ones (clients joining).
// That is the schedule under which the Redlock counterexamples happen; a
// random schedule would find them only by luck. stale-cache composes faults
// the same way, for a long-lived client: it locks once and waits while a
// minority of masters is cut off from the others, who lock; then it locks
// alone on that minority and the masters that saw the newer tokens.
package generator
