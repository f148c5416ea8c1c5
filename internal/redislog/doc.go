// Package redislog keeps go-redis's process-wide logger off the user's
// stderr for quorumlock's own clients, and sends their lines to the
// *slog.Logger the library was given instead.
//
// go-redis has a single logger per process (redis.SetLogger; by default it
// writes to stderr) and no logger per client: for every failed dial it prints
// "redis: ... pool.go:770: redis: connection pool: failed to dial after N
// attempts: ...", for instance. The dial runs on a goroutine of the pool with
// a context of its own, so the line cannot be told apart by its context; its
// error can. So:
//
//   - NewHook(l) is a redis.Hook for one client: the errors of its dials
//     carry the hook's route to l (Error and errors.Is/As are those of the
//     error wrapped), and so does the context of its commands and pipelines;
//   - Install puts a Router in go-redis's logger, once per process: a line
//     whose arguments hold a routed error, or whose context is routed, goes
//     to the routes' loggers at Debug level (dropped when they have none); any
//     other line goes where go-redis's default logger sends it (stderr, with
//     its "redis: " prefix, date and file:line), so that a program's other
//     go-redis clients log as before;
//   - Keep, called before the first Install, makes Install do nothing
//     (cluster.KeepRedisLogger is the public opt-out).
//
// Install changes process-wide state, which is why it is done once, only by
// the entry points that document it (cluster.Dial, redlock.New), and never
// after Keep. A program that sets its own go-redis logger after that keeps
// it: Install never runs again.
package redislog
