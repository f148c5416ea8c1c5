package suite

import (
	"context"
	"fmt"
	"iter"
	"net"
	"strconv"
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
// A merged acquire (acquire_many.lua, redlock/merge.go) has five shared keys,
// keys.Cert the third, then three per lock, the lock key first; its
// arguments are one shared, then five per lock, the lock value first.
const (
	acquireKeys       = 8
	mergedSharedKeys  = 5
	mergedKeysPerLock = 3
	mergedArgsPerLock = 5
)

// lockValue returns the lock value of an acquire script call on key, lone
// or merged with others, and false for any other command.
func lockValue(args []any, key string) (string, bool) {
	for k, v := range acquiredLocks(args) {
		if k == key {
			return v, true
		}
	}
	return "", false
}

// acquiredLocks yields the lock keys and values of an acquire script call,
// lone (one lock) or merged (more than one), and nothing for any other
// command.
func acquiredLocks(args []any) iter.Seq2[string, string] {
	return func(yield func(string, string) bool) {
		if len(args) < 3 || (fmt.Sprint(args[0]) != "evalsha" && fmt.Sprint(args[0]) != "eval") {
			return
		}
		n, err := strconv.Atoi(fmt.Sprint(args[2]))
		if err != nil || len(args) < 3+n+1 {
			return
		}
		switch {
		case n == acquireKeys && fmt.Sprint(args[7]) == keys.Cert:
			yield(fmt.Sprint(args[3]), fmt.Sprint(args[3+acquireKeys]))
		case n > mergedSharedKeys && (n-mergedSharedKeys)%mergedKeysPerLock == 0 && fmt.Sprint(args[5]) == keys.Cert:
			locks := (n - mergedSharedKeys) / mergedKeysPerLock
			if len(args) < 3+n+1+locks*mergedArgsPerLock {
				return
			}
			for j := range locks {
				if !yield(fmt.Sprint(args[3+mergedSharedKeys+j*mergedKeysPerLock]), fmt.Sprint(args[3+n+1+j*mergedArgsPerLock])) {
					return
				}
			}
		}
	}
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
