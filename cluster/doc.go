// Package cluster dials, describes and checks the independent Redis masters
// a quorum lock runs on.
//
// Dial takes redis:// and rediss:// URLs (FromEnv reads them from
// REDLOCK_MASTERS) and builds go-redis clients with fail-fast settings:
// ContextTimeoutEnabled, so that a stalled master cannot hold a call past its
// context, short dial/read/write timeouts, no retries of their own (the
// lock retries whole attempts): one dial attempt per call (DialerRetries 1)
// and no command retried (MaxRetries -1), and go-redis's maintenance
// notifications off (Dial does no I/O). rediss:// URLs talk TLS and only TLS (WithTLS,
// WithCA, WithClientCert, or the URL parameters tls_ca, tls_cert, tls_key,
// tls_server_name); credentials come from the URL, WithCredentials, or
// REDLOCK_PASSWORD (FromEnv, WithEnvPassword), and no error, log or URLs()
// shows a password (docs/security.md). go-redis's own log lines about these
// clients (a failed dial, say) never reach stderr: the first Dial of the
// process installs, once, a go-redis logger that sends them to the WithLogger
// logger (dropped by default) and passes every other go-redis client's lines
// to stderr as go-redis does; KeepRedisLogger, called first, opts out. Check reports, per master, what an operator
// needs before trusting it with locks: reachability and latency, the clock
// offset between the master's TIME and the local clock, version, run_id,
// uptime, persistence, DELEX support, whether a quorumlock client would
// quarantine it after a restart, and why, and whether two entries of the
// list are one server (the same run_id) or one replication history (the
// same master_replid).
package cluster
