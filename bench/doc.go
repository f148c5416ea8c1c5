// Package bench measures quorumlock beside github.com/go-redsync/redsync/v4,
// github.com/bsm/redislock and a raw floor (parallel SET NX PX and DEL with
// plain go-redis, no scripts), in one process, on the same redis-server
// masters and the same go-redis settings.
//
// It is a module of its own so that the peers it compares never enter the
// library's go.mod. The command is cmd/lockbench:
//
//	cd bench && go run ./cmd/lockbench            # about 2 s per scenario
//	cd bench && go run ./cmd/lockbench --quick    # a smoke run
//
// Run starts nothing itself: the caller passes the masters (five
// clustertest servers in the command). Every scenario is bounded in time
// (Config.Duration) and in operations (Config.MaxOps); the CPU time of the
// client process (getrusage) and of the redis-server processes
// (/proc/<pid>/stat) over the same window is reported per operation beside
// each figure. docs/performance.md explains the scenarios and carries a run.
package bench
