package redlock_test

import (
	"context"
	"errors"
	"fmt"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/redlock"
)

// threeMasters starts three in-process masters for the examples; in
// production these are go-redis clients of independent Redis servers (see
// package cluster).
func threeMasters() ([]redis.UniversalClient, func()) {
	var clients []redis.UniversalClient
	var stops []func()
	for range 3 {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			panic(err)
		}
		c := redis.NewClient(&redis.Options{Addr: m.Addr(), ContextTimeoutEnabled: true})
		clients = append(clients, c)
		stops = append(stops, func() { _ = c.Close(); m.Close() })
	}
	return clients, func() {
		for _, s := range stops {
			s()
		}
	}
}

func ExampleClient_TryLock() {
	masters, stop := threeMasters()
	defer stop()
	// Embedded masters never restart; real ones keep the default quarantine.
	locks, err := redlock.New(masters, redlock.WithoutQuarantine())
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	ctx := context.Background()
	lease, err := locks.TryLock(ctx, "invoice:7", 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println("held", lease.Key(), "with token", lease.Token())

	_, err = locks.TryLock(ctx, "invoice:7", 10*time.Second)
	fmt.Println("second attempt:", errors.Is(err, redlock.ErrNotAcquired))

	fmt.Println("release:", lease.Release(ctx))
	// Output:
	// held invoice:7 with token 1
	// second attempt: true
	// release: <nil>
}

func ExampleClient_Lock() {
	masters, stop := threeMasters()
	defer stop()
	locks, err := redlock.New(masters, redlock.WithoutQuarantine())
	if err != nil {
		panic(err)
	}
	defer locks.Close()

	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	// Lock waits until the key is free (or ctx ends); WithAutoExtend renews the
	// lease every third of its TTL until it is released.
	lease, err := locks.Lock(ctx, "report", time.Second, redlock.WithAutoExtend())
	if err != nil {
		panic(err)
	}
	defer lease.Release(context.Background())

	select {
	case <-lease.Done(): // closed the moment the lease is lost
		fmt.Println("lost:", context.Cause(lease.Context()))
	default:
		fmt.Println("working under", lease.Key(), "token", lease.Token())
	}
	// Output:
	// working under report token 1
}

func ExampleLease_Extend() {
	masters, stop := threeMasters()
	defer stop()
	locks, err := redlock.New(masters, redlock.WithoutQuarantine())
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	ctx := context.Background()
	lease, err := locks.TryLock(ctx, "batch", 2*time.Second)
	if err != nil {
		panic(err)
	}
	if err := lease.Extend(ctx, 30*time.Second); err != nil {
		panic(err)
	}
	fmt.Println("valid for more than 20s:", time.Until(lease.ValidUntil()) > 20*time.Second)
	_ = lease.Release(ctx)

	// A released (or lost) lease can never be extended: no silent success.
	err = lease.Extend(ctx, time.Second)
	fmt.Println(errors.Is(err, redlock.ErrLockLost))
	// Output:
	// valid for more than 20s: true
	// true
}
