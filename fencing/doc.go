// Package fencing defines fencing tokens and the stores that check them.
//
// A Redlock lease is timing-based: a holder that is paused (GC, SIGSTOP, a slow
// disk) or partitioned past its validity still believes it holds the lock. A
// fencing token closes that gap. Every lease carries a Token that is strictly
// greater than the token of every lease of the same key that ended before it
// was acquired (see docs/fencing.md for the protocol and its proof), and the
// protected resource checks it: a Store accepts a write only if its token is
// greater than the highest token it has seen for that resource, or equal to it
// and from the same holder. Anything else fails with ErrStaleToken, so a stale
// holder cannot overwrite the work of a newer one.
//
// This package holds the Token type, the Store interface and its accept rule,
// an in-memory Store for examples and tests, and an HTTP middleware that reads a
// token from a request header. Stores backed by Redis and PostgreSQL live in
// the sub-packages redisstore and pgstore.
package fencing
