package cli

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// redisLogger receives go-redis's own log lines (pool and handshake notices
// such as "auto mode fallback") and drops them: they must never reach an
// operator's terminal, where they would interleave with the command's
// output. Whatever matters reaches the command as an error.
type redisLogger struct{}

func (redisLogger) Printf(context.Context, string, ...any) {}

var silenceOnce sync.Once

// silenceRedisLogger installs redisLogger, once per process (go-redis's
// logger is process-wide).
func silenceRedisLogger() {
	silenceOnce.Do(func() { redis.SetLogger(redisLogger{}) })
}
