package redlock

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a Client or a lease starts ends by Close (lease watchers
// with their lease): goleak checks it after the package's tests. go-redis's
// own redial loop is not ours: after a dial to a killed server fails, its
// pool retries once a second and stops at the first retry after the pool
// closed, which may be just after the last test.
func TestMain(m *testing.M) {
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/redis/go-redis/v9/internal/pool.(*ConnPool).tryDial"))
}
