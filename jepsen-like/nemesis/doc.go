// Package nemesis injects the faults of a generator.Schedule into a run and
// heals them: masters paused, killed, restarted with or without their data,
// flushed, failed over to a lagging replica, their clocks jumped; clients
// cut off from masters, answered late, or paused past their lease; a
// long-lived client left with a stale token cache (stale-cache).
//
// Every fault is recorded in the history as a "<fault> start" and a
// "<fault> stop" nemesis event. Run heals every fault it started before it
// returns, also when its context ends early.
//
// To add a nemesis: give it a name in package generator (Names, and how
// Generate plans its Step), and a case in Nemesis.inject that applies it
// through the Env and returns the function that heals it.
package nemesis
