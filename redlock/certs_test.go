package redlock

import (
	"context"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// setCert gives a master a certificate naming its current lineage, as a
// certification would (without raising anything): tests that are about
// votes, not about how masters are certified, start from it.
func setCert(t *testing.T, rdb redis.UniversalClient) {
	t.Helper()
	ctx, cancel := context.WithTimeout(context.Background(), 5*time.Second)
	defer cancel()
	info, err := rdb.Info(ctx, "server", "replication").Result()
	if err != nil {
		t.Fatal(err)
	}
	l, _, err := probe.ParseLineage(info)
	if err != nil {
		t.Fatal(err)
	}
	if err := rdb.SetNX(ctx, keys.Incarnation, "test-incarnation", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if l.Incarnation, err = rdb.Get(ctx, keys.Incarnation).Result(); err != nil {
		t.Fatal(err)
	}
	if err := rdb.Set(ctx, keys.Cert, probe.Cert{Lineage: l, Origin: "test"}.String(), 0).Err(); err != nil {
		t.Fatal(err)
	}
}
