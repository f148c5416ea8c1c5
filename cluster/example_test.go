package cluster_test

import (
	"context"
	"fmt"

	"github.com/alicebob/miniredis/v2"

	"github.com/quorumlock/quorumlock/cluster"
)

func ExampleDial() {
	var urls []string
	for range 3 {
		m := miniredis.NewMiniRedis()
		if err := m.Start(); err != nil {
			panic(err)
		}
		defer m.Close()
		urls = append(urls, "redis://"+m.Addr())
	}
	ctx := context.Background()
	c, err := cluster.Dial(ctx, urls, cluster.WithPing())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(len(c.Clients()), "masters")
	// Output: 3 masters
}
