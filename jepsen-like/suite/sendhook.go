package suite

import (
	"context"
	"fmt"
	"net"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// sendHook is a go-redis hook on every connection of one process: it notes
// when the first acquire command of each attempt on key leaves for a master,
// so that the history can carry the ground truth the mutex checker bounds
// validity by (sent_ns), without trusting the library. An attempt is told
// apart from the next by its random lock value.
type sendHook struct {
	key string

	mu    sync.Mutex
	value string    // the lock value of the latest attempt seen
	first time.Time // when its first acquire command was sent
}

var _ redis.Hook = (*sendHook)(nil)

// acquireKeys is the number of keys of redlock's acquire script; the lock
// key is the first and keys.Cert the fifth (redlock/acquire.go sendAcquire).
const acquireKeys = 8

// lockValue returns the lock value of an acquire script call on key, and
// false for any other command.
func lockValue(args []any, key string) (string, bool) {
	if len(args) < 3+acquireKeys+1 {
		return "", false
	}
	if fmt.Sprint(args[0]) != "evalsha" && fmt.Sprint(args[0]) != "eval" {
		return "", false
	}
	if fmt.Sprint(args[2]) != fmt.Sprint(acquireKeys) || fmt.Sprint(args[3]) != key || fmt.Sprint(args[7]) != keys.Cert {
		return "", false
	}
	return fmt.Sprint(args[3+acquireKeys]), true
}

func (h *sendHook) note(cmds []redis.Cmder) {
	now := time.Now()
	for _, c := range cmds {
		v, ok := lockValue(c.Args(), h.key)
		if !ok {
			continue
		}
		h.mu.Lock()
		if v != h.value {
			h.value, h.first = v, now
		}
		h.mu.Unlock()
	}
}

// sent returns when the latest attempt's first acquire command was sent
// (the zero time when none was seen).
func (h *sendHook) sent() time.Time {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.first
}

func (h *sendHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) { return next(ctx, network, addr) }
}

func (h *sendHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		h.note([]redis.Cmder{cmd})
		return next(ctx, cmd)
	}
}

func (h *sendHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		h.note(cmds)
		return next(ctx, cmds)
	}
}
