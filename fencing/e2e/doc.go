// Package e2e holds end-to-end tests of fencing tokens: redlock leases on
// five real redis-server masters, under pauses, kills and restarts without
// persistence, writing through the fenced stores (in memory, Redis,
// PostgreSQL). It has no code of its own; run it with go test.
package e2e
