// Package model holds a Promela model of the fencing-token protocol and a Go
// test that checks it with the SPIN model checker.
//
// fencing.pml models one lock key on three masters with quorum two: clients
// that acquire leases in two rounds (SET NX, then raise the fencing counter on
// the granting masters), leases that end at arbitrary times, keys that expire
// once their lease is over, lost requests and replies, and stale holders that
// keep writing to a store guarded by the fencing accept rule. At most one
// master loses data, at any moment: a restart without persistence or a
// FLUSHALL (key and counter gone), or a failover to a lagging replica (an
// older key and a lower counter). That master is quarantined until every
// lease live at the loss is over and its counter has been raised from the
// others. A quarantined master still grants, and its grant counts only in a
// round where every master granted (the all-grant rule that lets fresh
// masters lock at once). SPIN explores every interleaving within the bounds
// and checks mutual exclusion, that a lease that ended before another was
// acquired has a smaller token, and that the store never accepts its writes
// after the newer lease's.
//
// The model also has one-round fencing (the fast path, on unless
// -DFASTPATH=0): round 1 proposes the client's cached highest token plus one,
// a granting master raises its counter to the proposal if that increases it,
// and when Q non-quarantined granting masters raised (or all M granted and
// raised) the proposal is the token and round 2 is skipped. A round that
// counted a quarantined master's grant must put its token on every master.
//
// Built with -DNAIVE, the same file models the naive "SET NX + INCR in one
// round" protocol; with -DBROKEN_FIRST_CONTACT, -DBROKEN_ALLGRANT or
// -DBROKEN_FAILOVER or -DBROKEN_OWN_LAMBDA, the quarantine weakened one way
// each (a client meeting a master for the first time trusts it; quarantined
// grants count whenever a quorum granted; a failover is not quarantined; the
// quarantine waits only for the syncing client's own leases); with -DBROKEN_FASTPATH,
// the fast path taken when any Q granting masters raised; with
// -DNARROW_ALLGRANT, the fast path without the rule for rounds that counted
// a quarantined grant. SPIN must refute each of them.
//
// tolerant.pml models the data-loss-tolerant quorum of
// redlock.WithDataLossTolerance(f): M = 2 to 5 masters, quorum
// ⌊(M+f)/2⌋ + 1, no quarantine at all, and any master losing its key and
// counter (or rolling back to an older counter) at any step, as long as at
// most f distinct masters lose data within one lease's span (from its
// attempt's first request until it has ended and the next lease is
// acquired). SPIN checks mutual exclusion and growing tokens for M = 3, 4
// and 5, and refutes q = majority without the quarantine and two weaker
// fault models.
//
// The test (go test ./fencing/model/) needs spin and gcc on PATH and fails if
// they are missing. It runs spin -a, compiles the generated verifier pan and
// runs an exhaustive search for each configuration, asserting that the sound
// protocol has no error in a complete search and that every naive or broken
// variant has a counterexample violating the expected assertion, whose
// replayed events it logs and checks. docs/fencing-model.md describes the
// model, its bounds, the properties, the counterexamples and what it does not
// cover.
//
// The package has no non-test Go code.
package model
