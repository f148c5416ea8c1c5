// Package model holds a Promela model of the fencing-token protocol and a Go
// test that checks it with the SPIN model checker.
//
// fencing.pml models one lock key on three masters with quorum two: clients
// that acquire leases in two rounds (SET NX, then raise the fencing counter on
// the granting masters), leases that end at arbitrary times, keys that expire
// once their lease is over, lost requests and replies, at most one master
// restart followed by a quarantine, and stale holders that keep writing to a
// store guarded by the fencing accept rule. SPIN explores every interleaving
// within the bounds and checks that a lease that ended before another was
// acquired has a smaller token and that the store never accepts its writes
// after the newer lease's. Built with -DNAIVE, the same file models the naive
// "SET NX + INCR in one round" protocol, which SPIN must refute.
//
// The test (go test ./fencing/model/) needs spin and gcc on PATH and fails if
// they are missing. It runs spin -a, compiles the generated verifier pan and
// runs an exhaustive search for each configuration, asserting that the sound
// protocol has no error in a complete search and that the naive one has a
// counterexample. docs/fencing-model.md describes the model, its bounds, the
// properties and what it does not cover.
//
// The package has no non-test Go code.
package model
