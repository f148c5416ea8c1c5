package freeport

import (
	"bytes"
	"io"
	"os"
)

// redisReady is what redis-server logs once it listens on its ports and has
// loaded its data.
var redisReady = []byte("Ready to accept connections")

// RedisLog is the log file of a redis-server about to start, read from
// where it ended then: a restart appends to the same file, and the line of
// an earlier start proves nothing about this one.
type RedisLog struct {
	path string
	from int64
}

// StartingRedisLog notes where path ends now (0 when it does not exist);
// call it before starting the server.
func StartingRedisLog(path string) RedisLog {
	l := RedisLog{path: path}
	if fi, err := os.Stat(path); err == nil {
		l.from = fi.Size()
	}
	return l
}

// Ready reports whether the server said, since it was started, that it
// accepts connections. A PING to the port it was given proves less: when
// another process took the port between Loopback and the bind, that process
// answers while this server exits with "Address already in use".
func (l RedisLog) Ready() bool {
	f, err := os.Open(l.path)
	if err != nil {
		return false
	}
	defer f.Close()
	if _, err := f.Seek(l.from, io.SeekStart); err != nil {
		return false
	}
	b, err := io.ReadAll(f)
	return err == nil && bytes.Contains(b, redisReady)
}
