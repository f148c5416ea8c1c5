// Command redlockctl is quorumlock's operator CLI.
//
//	redlockctl demo     the quorum lock on five embedded masters; needs nothing installed
//	redlockctl status   one line per master of REDLOCK_MASTERS (or --masters): reachability,
//	                    latency, clock offset, persistence, DELEX, and whether it votes
//
// The commands live in cmd/redlockctl/internal/cli, one file per command.
package main
