package backend

import (
	"context"
	"errors"
	"time"
)

// ErrUnsupported is returned (wrapped) by a fault a backend cannot inject.
var ErrUnsupported = errors.New("backend: fault not supported")

// Persistence selects how a master keeps its data across a restart.
type Persistence int

const (
	// NoPersistence: no RDB, no AOF: a restarted master is empty.
	NoPersistence Persistence = iota
	// AOFAlways: appendonly yes, appendfsync always: nothing acknowledged is lost.
	AOFAlways
	// FromSnapshot: no AOF, no save points, and the data of the RDB that
	// the master's last Snapshot saved (SnapshotFile in its directory): a
	// restart rolls the master back to that moment.
	FromSnapshot
)

// SnapshotFile is the name of the RDB a Snapshot saves and a start
// FromSnapshot loads.
const SnapshotFile = "snapshot.rdb"

// Args are the redis-server arguments of p.
func (p Persistence) Args() []string {
	switch p {
	case AOFAlways:
		return []string{"--appendonly", "yes", "--appendfsync", "always"}
	case FromSnapshot:
		return []string{"--appendonly", "no", "--save", "", "--dbfilename", SnapshotFile}
	}
	return []string{"--appendonly", "no", "--save", ""}
}

// Master is one Redis master of a run, as the nemesis sees it.
type Master interface {
	// Name is "m0", "m1", ...
	Name() string
	// Addr is where the master answers now (host:port on this machine); it
	// changes after a failover, or a container's restart.
	Addr() string
	// Pause stops the master (SIGSTOP, docker pause); Resume continues it.
	Pause(ctx context.Context) error
	Resume(ctx context.Context) error
	// Kill stops the master at once (SIGKILL); Start starts it again with p
	// (FromSnapshot: from the RDB of the last Snapshot; ErrUnsupported where
	// the backend keeps none).
	Kill(ctx context.Context) error
	Start(ctx context.Context, p Persistence) error
	// Snapshot saves the master's data as it is now (SAVE) for a later
	// Start(ctx, FromSnapshot), which rolls the master back to it;
	// ErrUnsupported where it cannot.
	Snapshot(ctx context.Context) error
	// Flush empties the master without restarting it (FLUSHALL).
	Flush(ctx context.Context) error
	// DetachReplica starts (once) a replica of the master and, once it has
	// synced, cuts it off its master: from then on it lags. The local
	// backend detaches it (REPLICAOF NO ONE); the Docker backend partitions
	// the two containers' network (the replica stays a replica with its
	// link down, as behind a real partition), and Failover promotes it.
	DetachReplica(ctx context.Context) error
	// Failover kills the master and puts its detached replica in its place:
	// Addr answers with the replica from then on.
	Failover(ctx context.Context) error
	// SetClockOffset shifts the master's wall clock (CLOCK_REALTIME,
	// gettimeofday, time) by d; ErrUnsupported where it cannot.
	SetClockOffset(ctx context.Context, d time.Duration) error
	// Disconnect cuts the master off the network: every packet to and from
	// it (clients, other masters, replicas) is dropped, so that calls in
	// flight hang and are retransmitted by TCP, delivered late after
	// Reconnect or timed out, and new connections hang (in their handshake,
	// or, behind docker-proxy, at their first reply) instead of being
	// refused. The master keeps running and keeps its address. Reconnect
	// lifts the cut (a no-op when there is none). ErrUnsupported where the
	// backend cannot cut a master's network (the local backend: its masters
	// share the host's loopback; use the in-process proxy instead).
	Disconnect(ctx context.Context) error
	Reconnect(ctx context.Context) error
}

// Backend is a set of masters.
type Backend interface {
	Masters() []Master
	// Heal resumes paused masters, starts killed ones (empty), reconnects
	// disconnected ones and resets clock offsets: what the end of a run does.
	Heal(ctx context.Context) error
	// Close stops everything the backend started, by id.
	Close() error
}
