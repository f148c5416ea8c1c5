package redlock_test

import (
	"context"
	"encoding/json"
	"errors"
	"fmt"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// fiveMasters starts five real redis-server processes for the examples (they
// need Debian's redis-server); in production these are go-redis clients of
// your own independent Redis servers (see package cluster).
func fiveMasters() ([]redis.UniversalClient, func()) {
	c, err := clustertest.Launch(5, clustertest.NoPersistence)
	if err != nil {
		panic(err)
	}
	var clients []redis.UniversalClient
	for _, s := range c.Servers {
		clients = append(clients, redis.NewClient(&redis.Options{Addr: s.Addr, ContextTimeoutEnabled: true}))
	}
	return clients, func() {
		for _, rc := range clients {
			_ = rc.Close()
		}
		c.Close()
	}
}

// The package documentation's snippet, run against five fresh masters with
// the default restart quarantine: every master grants, so the first lock is
// taken at once.
func Example() {
	masters, stop := fiveMasters()
	defer stop()
	store := fencing.NewMemoryStore()
	err := docSnippet(context.Background(), masters, store, "worker-1", []byte("paid"))
	fmt.Println("write under the lock:", err)
	// Output: write under the lock: <nil>
}

// docSnippet is the snippet of doc.go, word for word (TestDocSnippet checks).
func docSnippet(ctx context.Context, masters []redis.UniversalClient, store fencing.Store, holder string, data []byte) error {
	locks, err := redlock.New(masters) // one go-redis client per master
	if err != nil {
		return err
	}
	defer locks.Close()
	lease, err := locks.Lock(ctx, "invoice:7", 10*time.Second, redlock.WithAutoExtend())
	if err != nil {
		return err // errors.Is(err, redlock.ErrNotAcquired), ErrNoQuorum, ctx.Err()
	}
	defer lease.Release(ctx)
	return store.Write(lease.Context(), "invoice:7", lease.Token(), holder, data)
}

func ExampleNew() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters, redlock.WithQuarantine(30*time.Second))
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	fmt.Println(locks.Masters(), "masters, quorum", locks.Quorum())
	// Output: 5 masters, quorum 3
}

func ExampleClient_TryLock() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters)
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
	fmt.Println("second attempt:", errors.Is(err, redlock.ErrNotAcquired), errors.Is(err, redlock.ErrHeldByOther))

	fmt.Println("release:", lease.Release(ctx))
	// Output:
	// held invoice:7 with token 1
	// second attempt: true true
	// release: <nil>
}

func ExampleClient_Lock() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters)
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

	time.Sleep(1500 * time.Millisecond) // longer than the TTL: renewed meanwhile
	select {
	case <-lease.Done(): // closed the moment the lease is lost
		fmt.Println("lost:", context.Cause(lease.Context()))
	default:
		fmt.Println("still working under", lease.Key(), "token", lease.Token())
	}
	// Output:
	// still working under report token 1
}

func ExampleLease_Release() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters)
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	ctx := context.Background()
	lease, err := locks.TryLock(ctx, "batch", 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println("first release:", lease.Release(ctx))
	fmt.Println("second release:", errors.Is(lease.Release(ctx), redlock.ErrReleased))
	fmt.Println("context cause:", context.Cause(lease.Context()))
	// Output:
	// first release: <nil>
	// second release: true
	// context cause: redlock: lease released
}

func ExampleLease_Extend() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters)
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

// A master counts by itself once certified, and a fresh cluster is certified
// at its first use. A master that lost its data (here a FLUSHALL) stops
// counting until the longest TTL in use has passed and its counters were
// raised from the others; Health says so, counting down.
func ExampleClient_Health() {
	masters, stop := fiveMasters()
	defer stop()
	ctx := context.Background()
	locks, err := redlock.New(masters, redlock.WithQuarantine(time.Minute))
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	lease, err := locks.TryLock(ctx, "k", time.Second) // certifies the fresh cluster
	if err != nil {
		panic(err)
	}
	_ = lease.Release(ctx)
	if err := masters[0].FlushAll(ctx).Err(); err != nil {
		panic(err)
	}
	// Master 0's grant carries no certificate now: the first lock that hears
	// it (a round may decide before master 0 answers) takes it out.
	for range 50 {
		lease, err = locks.TryLock(ctx, "k", time.Second)
		if err != nil {
			panic(err)
		}
		_ = lease.Release(ctx)
		if locks.Health()[0].Quarantined {
			break
		}
	}
	for _, h := range locks.Health() {
		fmt.Println("master", h.Master, "counts:", !h.Quarantined, "lost its data:", errors.Is(h.Err, redlock.ErrDataLost),
			"counts again later:", h.Until.After(time.Now()))
	}
	// Output:
	// master 0 counts: false lost its data: true counts again later: true
	// master 1 counts: true lost its data: false counts again later: false
	// master 2 counts: true lost its data: false counts again later: false
	// master 3 counts: true lost its data: false counts again later: false
	// master 4 counts: true lost its data: false counts again later: false
}

// A buy needs the item and the buyer's funds: LockAll takes both, in one
// global order, all or nothing, so two buyers never deadlock.
func ExampleClient_LockAll() {
	masters, stop := fiveMasters()
	defer stop()
	locks, err := redlock.New(masters)
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	lease, err := locks.LockAll(ctx, []string{"market:item:42", "funds:alice"}, 5*time.Second)
	if err != nil {
		panic(err)
	}
	defer lease.Release(ctx)
	// The keys are taken in order; each token is above every token this
	// Client has seen, so a later key's token is the higher one.
	fmt.Println(lease.Keys(), lease.Tokens())
	// Output: [funds:alice market:item:42] map[funds:alice:1 market:item:42:2]
}

// A lease taken in one process and released in another: the first writes
// its State (here as JSON; it holds the lease's secret, so keep it like a
// password), the second resumes it with a Client of its own.
func ExampleClient_Resume() {
	masters, stop := fiveMasters()
	defer stop()
	ctx := context.Background()

	first, err := redlock.New(masters)
	if err != nil {
		panic(err)
	}
	defer first.Close()
	lease, err := first.TryLock(ctx, "nightly-report", time.Minute)
	if err != nil {
		panic(err)
	}
	st, err := lease.State()
	if err != nil {
		panic(err)
	}
	saved, err := json.Marshal(st)
	if err != nil {
		panic(err)
	}

	second, err := redlock.New(masters)
	if err != nil {
		panic(err)
	}
	defer second.Close()
	var loaded redlock.LeaseState
	if err := json.Unmarshal(saved, &loaded); err != nil {
		panic(err)
	}
	resumed, err := second.Resume(loaded)
	if err != nil {
		panic(err)
	}
	fmt.Println("same token:", resumed.Token() == lease.Token())
	fmt.Println("released by the second:", resumed.Release(ctx))
	fmt.Println("the first can extend it:", lease.Extend(ctx, time.Minute) == nil)
	// Output:
	// same token: true
	// released by the second: <nil>
	// the first can extend it: false
}
