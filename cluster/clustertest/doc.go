// Package clustertest starts real redis-server processes for tests.
//
// Each Server is Debian's (or any) redis-server binary listening on a free
// loopback port in its own temporary directory. A Server can be paused
// (SIGSTOP), resumed (SIGCONT), killed (SIGKILL) and restarted on the same
// port, with or without an append-only file, which is what the fault tests of
// quorumlock need. WithTLS starts TLS-only servers (mutual TLS optional)
// with certificates NewCerts makes at run time; WithArgs passes extra
// redis-server arguments. Every process a test starts is stopped by PID in
// t.Cleanup, also when the test fails.
//
// The binary is looked up as "redis-server" on PATH, or taken from the
// QUORUMLOCK_REDIS_SERVER environment variable. When it is missing, Start
// fails the test: a test that needs real servers never passes without them.
package clustertest
