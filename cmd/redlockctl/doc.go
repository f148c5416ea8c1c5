// Command redlockctl is quorumlock's operator CLI: it inspects and operates
// quorum locks on the masters of REDLOCK_MASTERS (or --masters).
//
//	redlockctl status [KEY...]          masters and the quorum margin; or who holds each key, where
//	redlockctl lock KEY --ttl D         take a lock; prints a lease handle (a secret) for:
//	redlockctl extend HANDLE --ttl D    renew it
//	redlockctl unlock HANDLE            release it
//	redlockctl run KEY --ttl D -- CMD ARGS...       run CMD under the lock (like flock(1))
//	redlockctl audit                    lock keys without a TTL, stray minority keys
//	redlockctl doctor                   the masters' configuration, each finding with its fix
//	redlockctl demo                     the story of locks and fencing on embedded masters
//	redlockctl bench | version | sem
//
// Exit codes: 0 ok, 1 failed, 2 usage, 3 not acquired, 4 no quorum, 5 lease
// lost; run exits with its command's code. docs/cli.md documents every
// command, flag, JSON schema and environment variable. The commands live in
// cmd/redlockctl/internal/cli, one file per command.
package main
