// Package inspect reads what quorum locks look like on each master, for
// redlockctl's status and audit and for the demo: an owner id per lock
// value (never the value itself), a verdict per key (held, free, split),
// and audit findings (keys without a TTL, stray minority keys, fencing
// counters without a lock), with the owner-checked --fix-ttl repair.
package inspect
