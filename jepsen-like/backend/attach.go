package backend

import "context"

// ReplicaAttacher is a Master that can start its replica ahead of
// DetachReplica. A master's first replica gives it a new replication id
// (Redis starts its backlog under a new one), which clients that watch a
// master's lineage take as a new history of its data; attached before the
// clients first see the master, the replica changes nothing they see, and
// DetachReplica later only cuts it off, which leaves the master's
// replication id alone.
type ReplicaAttacher interface {
	// AttachReplica starts (once) a replica of the master and waits until
	// it has synced; it then follows the master until DetachReplica, or a
	// Kill of the master, cuts it off (a killed master restarting would
	// otherwise resync it, and take a new replication id again).
	AttachReplica(ctx context.Context) error
}
