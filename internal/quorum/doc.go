// Package quorum holds the one formula every part of quorumlock counts votes
// with: the quorum of M masters of which at most f may lose data within a
// lease's span, from its first request until the key's next acquisition
// (docs/safety.md, "A quorum that needs no detection").
package quorum
