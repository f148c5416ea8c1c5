// Package e2e holds end-to-end tests of fencing tokens: redlock leases on
// five real redis-server masters, under pauses, kills, restarts without
// persistence and holders paused past their lease, writing through the
// fenced stores (in memory, Redis, PostgreSQL). The faults, the history and
// the checkers are those of the jepsen-like suite (jepsen-like/suite). It
// has no code of its own; run it with go test.
package e2e
