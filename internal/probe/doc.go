// Package probe asks one Redis master, in one pipelined round trip, the
// facts quorumlock decides on: identity (run_id, version, uptime), persistence
// (AOF, appendfsync, RDB saves), its clock (TIME), whether it has DELEX, and
// its quorumlock epoch marker. It also holds the restart-quarantine rule that
// both redlock (to decide votes) and cluster (to report them) apply.
package probe
