package cli

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster"
)

// redisLogger receives go-redis's own log lines (pool and handshake notices
// such as "failed to dial") and drops them: they must never reach an
// operator's terminal, where they would interleave with the command's
// output. Whatever matters reaches the command as an error.
type redisLogger struct{}

func (redisLogger) Printf(context.Context, string, ...any) {}

var silenceOnce sync.Once

// silenceRedisLogger installs redisLogger, once per process (go-redis's
// logger is process-wide). The library routes its own clients' lines off
// stderr by itself, but passes other clients' lines on to stderr; redlockctl
// drops every line, so it opts out of the library's logger first
// (cluster.KeepRedisLogger), which would otherwise replace this one at the
// first Dial.
func silenceRedisLogger() {
	silenceOnce.Do(func() {
		cluster.KeepRedisLogger()
		redis.SetLogger(redisLogger{})
	})
}
