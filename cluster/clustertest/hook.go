package clustertest

import (
	"context"
	"sync"

	"github.com/redis/go-redis/v9"
)

// OnceBefore is a go-redis hook that runs Do, once, just before the first
// single command (not pipeline) for which Match is true is sent: a test
// places a fault at an exact step of the code under test with it, with no
// sleep. Fired and Err report whether Do ran and what it returned.
type OnceBefore struct {
	Match func(cmd redis.Cmder) bool
	Do    func() error

	once sync.Once
	mu   sync.Mutex
	done bool
	err  error
}

// DialHook lets dials through.
func (h *OnceBefore) DialHook(next redis.DialHook) redis.DialHook { return next }

// ProcessHook runs Do before the first matching command.
func (h *OnceBefore) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if h.Match(cmd) {
			h.once.Do(func() {
				err := h.Do()
				h.mu.Lock()
				h.done, h.err = true, err
				h.mu.Unlock()
			})
		}
		return next(ctx, cmd)
	}
}

// ProcessPipelineHook lets pipelines through.
func (h *OnceBefore) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// Fired reports whether Do has run.
func (h *OnceBefore) Fired() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.done
}

// Err is what Do returned (nil before it ran).
func (h *OnceBefore) Err() error {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.err
}
