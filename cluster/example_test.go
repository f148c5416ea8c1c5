package cluster_test

import (
	"context"
	"errors"
	"fmt"
	"os"
	"strings"
	"time"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// threeServers starts three real redis-server processes (Debian's
// redis-server) for the examples and returns their redis:// URLs.
func threeServers(p clustertest.Persistence) ([]string, func()) {
	c, err := clustertest.Launch(3, p)
	if err != nil {
		panic(err)
	}
	return c.URLs(), c.Close
}

func ExampleDial() {
	urls, stop := threeServers(clustertest.NoPersistence)
	defer stop()
	ctx := context.Background()
	c, err := cluster.Dial(ctx, urls, cluster.WithPing())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	locks, err := redlock.New(c.Clients()) // restart quarantine on
	if err != nil {
		panic(err)
	}
	defer locks.Close()
	lease, err := locks.TryLock(ctx, "invoice:7", 10*time.Second)
	if err != nil {
		panic(err)
	}
	fmt.Println(len(c.Clients()), "masters; token", lease.Token())
	fmt.Println("release:", lease.Release(ctx))

	_, err = cluster.Dial(ctx, []string{"127.0.0.1:6379"})
	fmt.Println(errors.Is(err, cluster.ErrInvalidArgument), strings.Contains(err.Error(), "write redis://127.0.0.1:6379"))
	// Output:
	// 3 masters; token 1
	// release: <nil>
	// true true
}

func ExampleFromEnv() {
	urls, stop := threeServers(clustertest.NoPersistence)
	defer stop()
	// REDLOCK_MASTERS=redis://h1:6379,redis://h2:6379,redis://h3:6379
	if err := os.Setenv(cluster.EnvMasters, strings.Join(urls, ",")); err != nil {
		panic(err)
	}
	defer os.Unsetenv(cluster.EnvMasters)
	c, err := cluster.FromEnv(context.Background())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(len(c.Clients()), "masters from", cluster.EnvMasters)
	// Output: 3 masters from REDLOCK_MASTERS
}

// Check reports each master as a quorumlock client meeting it now would see
// it. Durable masters (appendonly yes, appendfsync always) vote at once;
// these, never used by quorumlock, are a fresh cluster.
func ExampleCluster_Check() {
	urls, stop := threeServers(clustertest.AOFAlways)
	defer stop()
	c, err := cluster.Dial(context.Background(), urls, cluster.WithLongestTTL(30*time.Second))
	if err != nil {
		panic(err)
	}
	defer c.Close()
	for _, st := range c.Check(context.Background()) {
		fmt.Println("master", st.Master, "reachable:", st.Reachable, "durable:", st.Durable(), "fresh:", st.Fresh, "quarantined:", st.Quarantined)
	}
	// Output:
	// master 0 reachable: true durable: true fresh: true quarantined: false
	// master 1 reachable: true durable: true fresh: true quarantined: false
	// master 2 reachable: true durable: true fresh: true quarantined: false
}
