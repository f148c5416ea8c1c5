package redlock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
)

// pipelineCounter is a go-redis hook that holds every pipeline of scripts
// for hold, so that concurrent calls must queue behind the busy workers, and
// records the largest pipeline sent.
type pipelineCounter struct {
	hold      time.Duration
	largest   atomic.Int64
	pipedEval atomic.Int64 // EVAL sent in a pipeline: the NOSCRIPT fallback
}

func (p *pipelineCounter) DialHook(next redis.DialHook) redis.DialHook { return next }

func (p *pipelineCounter) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return next
}

func (p *pipelineCounter) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		for _, c := range cmds {
			if c.Name() == "eval" {
				p.pipedEval.Add(1)
			}
		}
		if len(cmds) > 0 && cmds[0].Name() == "evalsha" {
			time.Sleep(p.hold)
		}
		for n := int64(len(cmds)); ; {
			cur := p.largest.Load()
			if n <= cur || p.largest.CompareAndSwap(cur, n) {
				break
			}
		}
		return next(ctx, cmds)
	}
}

// Calls that arrive while one is on the wire go out together as one pipeline.
func TestConcurrentCallsArePipelined(t *testing.T) {
	r := newRig(t, 3)
	hook := &pipelineCounter{hold: 100 * time.Millisecond}
	for _, rc := range r.clients {
		rc.(*redis.Client).AddHook(hook)
	}
	c := r.client(t, WithMasterTimeout(2*time.Second))
	lockReleaseConcurrently(t, c, 16)
	if hook.largest.Load() < 2 {
		t.Fatalf("largest pipeline had %d commands; 16 concurrent locks were never batched", hook.largest.Load())
	}
}

// After SCRIPT FLUSH (as after a restart), pipelined EVALSHA calls fall back
// to EVAL.
func TestPipelinedScriptsSurviveScriptFlush(t *testing.T) {
	r := newRig(t, 3)
	hook := &pipelineCounter{hold: 50 * time.Millisecond}
	for _, rc := range r.clients {
		rc.(*redis.Client).AddHook(hook)
	}
	c := r.client(t, WithMasterTimeout(2*time.Second))
	ctx := context.Background()
	for round := range 2 {
		for _, rc := range r.clients {
			if err := rc.ScriptFlush(ctx).Err(); err != nil {
				t.Fatal(err)
			}
		}
		t.Logf("round %d", round)
		lockReleaseConcurrently(t, c, 8)
	}
	if hook.pipedEval.Load() == 0 {
		t.Fatal("no pipelined EVAL was sent: the NOSCRIPT fallback was not exercised")
	}
}

// lockReleaseConcurrently takes and releases n distinct keys at once.
func lockReleaseConcurrently(t *testing.T, c *Client, n int) {
	t.Helper()
	ctx := context.Background()
	var wg sync.WaitGroup
	for i := range n {
		wg.Go(func() {
			lease, err := c.TryLock(ctx, fmt.Sprintf("k%d", i), 10*time.Second)
			if err != nil {
				t.Error(err)
				return
			}
			if err := lease.Release(ctx); err != nil {
				t.Error(err)
			}
		})
	}
	wg.Wait()
}
