package backend

import (
	"context"
	"fmt"
	"os"
	"strconv"
	"time"

	"github.com/redis/go-redis/v9"
)

// WriteClockOffset writes d, in nanoseconds, to the clock file a master's
// clock shim (nemesis/clockshim) reads, atomically (a temporary file
// renamed over it), so the shim never reads half a number.
func WriteClockOffset(file string, d time.Duration) error {
	tmp := file + ".tmp"
	if err := os.WriteFile(tmp, []byte(strconv.FormatInt(int64(d), 10)+"\n"), 0o644); err != nil {
		return fmt.Errorf("clock offset: %w", err)
	}
	if err := os.Rename(tmp, file); err != nil {
		return fmt.Errorf("clock offset: %w", err)
	}
	return nil
}

// WaitForClockOffset waits, up to 2 s, until the TIME of the master at addr
// is d ahead of this process's clock (within half a second): the shim reads
// its file within 10 ms, so the jump has happened when it returns nil.
func WaitForClockOffset(ctx context.Context, addr string, d time.Duration) error {
	c := redis.NewClient(&redis.Options{Addr: addr, MaxRetries: -1, ContextTimeoutEnabled: true})
	defer c.Close()
	wctx, cancel := context.WithTimeout(ctx, 2*time.Second)
	defer cancel()
	for {
		now, err := c.Time(wctx).Result()
		if err == nil {
			if off := now.Sub(time.Now()) - d; off > -500*time.Millisecond && off < 500*time.Millisecond {
				return nil
			}
		}
		if wctx.Err() != nil {
			return fmt.Errorf("the clock of the master at %s did not move by %v: %w", addr, d, wctx.Err())
		}
		time.Sleep(5 * time.Millisecond)
	}
}
