package restart

import (
	"sync"

	"github.com/redis/go-redis/v9"
)

// Member is one master taking part in a certification: its index among the
// masters, and its client.
type Member struct {
	Index int
	RDB   redis.UniversalClient
}

// each runs f for every member in parallel and returns their errors by
// position. Every goroutine ends before it returns (the callers' contexts
// bound them).
func each[T any](members []Member, f func(Member) (T, error)) ([]T, []error) {
	out, errs := make([]T, len(members)), make([]error, len(members))
	var wg sync.WaitGroup
	for i, m := range members {
		wg.Go(func() { out[i], errs[i] = f(m) })
	}
	wg.Wait()
	return out, errs
}
