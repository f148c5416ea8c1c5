package semaphore_test

import (
	"context"
	"errors"
	"fmt"
	"sync"
	"sync/atomic"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// oneMaster starts an in-process master for the examples; in production
// this is a go-redis client of a Redis server (see package cluster).
func oneMaster() ([]redis.UniversalClient, func()) {
	m := miniredis.NewMiniRedis()
	if err := m.Start(); err != nil {
		panic(err)
	}
	c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
	return []redis.UniversalClient{c}, func() { _ = c.Close(); m.Close() }
}

// Five concurrent calls per account to a rate-limited third-party API:
// twenty workers share one account's semaphore, and never more than five
// call at once.
func Example_perAccountLimit() {
	masters, stop := oneMaster()
	defer stop()
	sem, err := semaphore.New(masters, "api:account:42", 5)
	if err != nil {
		panic(err)
	}
	defer sem.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	var inside, most, calls atomic.Int64
	callAPI := func(ctx context.Context) {
		n := inside.Add(1)
		for cur := most.Load(); n > cur && !most.CompareAndSwap(cur, n); cur = most.Load() {
		}
		time.Sleep(10 * time.Millisecond) // the API call, under the permit's context
		calls.Add(1)
		inside.Add(-1)
	}
	var wg sync.WaitGroup
	for range 20 {
		wg.Add(1)
		go func() {
			defer wg.Done()
			permit, err := sem.Acquire(ctx) // waits for a free place
			if err != nil {
				return
			}
			defer permit.Release(context.Background())
			callAPI(permit.Context())
		}()
	}
	wg.Wait()
	fmt.Println("calls:", calls.Load())
	fmt.Println("never more than 5 at once:", most.Load() <= 5)
	// Output:
	// calls: 20
	// never more than 5 at once: true
}

// A long-lived streaming connection keeps its slot by refreshing it every
// third of the timeout; WithAutoRefresh does that in the background.
func Example_streamingSlot() {
	masters, stop := oneMaster()
	defer stop()
	sem, err := semaphore.New(masters, "streams", 2,
		semaphore.WithTimeout(time.Second), semaphore.WithAutoRefresh())
	if err != nil {
		panic(err)
	}
	defer sem.Close()

	ctx := context.Background()
	permit, err := sem.TryAcquire(ctx)
	if err != nil {
		panic(err) // errors.Is(err, semaphore.ErrBusy) when both slots stream
	}
	select {
	case <-permit.Done(): // closed the moment a refresh fails: stop streaming
		fmt.Println("slot lost:", context.Cause(permit.Context()))
	case <-time.After(2 * time.Second): // stream for twice the timeout
		fmt.Println("still streaming after 2s:", permit.Err() == nil)
	}
	fmt.Println("release:", permit.Release(ctx))
	// Output:
	// still streaming after 2s: true
	// release: <nil>
}

// Refresh by hand; a permit that missed its refresh is lost for good.
func ExamplePermit_Refresh() {
	masters, stop := oneMaster()
	defer stop()
	sem, err := semaphore.New(masters, "streams", 1, semaphore.WithTimeout(time.Second))
	if err != nil {
		panic(err)
	}
	defer sem.Close()
	ctx := context.Background()
	permit, err := sem.TryAcquire(ctx)
	if err != nil {
		panic(err)
	}
	for range 5 { // 1.5 s: longer than the timeout
		time.Sleep(300 * time.Millisecond)
		if err := permit.Refresh(ctx); err != nil {
			panic(err)
		}
	}
	fmt.Println("held after 1.5s:", permit.Err() == nil)

	<-permit.Done() // stop refreshing: the permit times out
	err = permit.Refresh(ctx)
	fmt.Println("refresh after the timeout is lost:", errors.Is(err, semaphore.ErrLost))
	// Output:
	// held after 1.5s: true
	// refresh after the timeout is lost: true
}

// TryAcquire fails fast on a full semaphore.
func ExampleSemaphore_TryAcquire() {
	masters, stop := oneMaster()
	defer stop()
	sem, err := semaphore.New(masters, "workers", 1)
	if err != nil {
		panic(err)
	}
	defer sem.Close()
	ctx := context.Background()
	permit, err := sem.TryAcquire(ctx)
	if err != nil {
		panic(err)
	}
	fmt.Println("token:", permit.Token())
	_, err = sem.TryAcquire(ctx)
	fmt.Println("second:", errors.Is(err, semaphore.ErrBusy))
	fmt.Println("release:", permit.Release(ctx))
	// Output:
	// token: 1
	// second: true
	// release: <nil>
}
