package cluster

import (
	"fmt"
	"log/slog"

	"github.com/quorumlock/quorumlock/internal/redislog"
)

// go-redis logs through one logger per process (redis.SetLogger), to stderr
// by default, with lines such as "redis: connection pool: failed to dial
// after 1 attempts: ..." for every failed dial. Dial keeps those of its own
// clients off stderr: the first Dial of the process (or redlock.New) installs,
// once, a go-redis logger that sends the lines of quorumlock's clients to
// their WithLogger logger (dropped by default) and every other line to
// stderr exactly as go-redis's default logger does, so that the program's
// other go-redis clients log as before. KeepRedisLogger opts out.

// WithLogger sends go-redis's log lines about these clients (a failed dial,
// with its master's address and cause) to l at Debug level, as message
// "go-redis" with attributes "line" and "master". Default: they are dropped
// (the error they explain reaches the caller anyway). A nil logger is
// ErrInvalidArgument.
func WithLogger(l *slog.Logger) Option {
	return func(c *config) error {
		if l == nil {
			return fmt.Errorf("%w: nil logger", ErrInvalidArgument)
		}
		c.logger = l
		return nil
	}
}

// KeepRedisLogger makes Dial and redlock.New leave go-redis's process-wide
// logger alone: it stays go-redis's default (stderr) or whatever the
// program sets with redis.SetLogger, and receives the lines of quorumlock's
// clients too. Call it before the first Dial or redlock.New of the process;
// after that it changes nothing already installed (then set your own logger
// with redis.SetLogger: Dial and New install theirs only once).
func KeepRedisLogger() { redislog.Keep() }
