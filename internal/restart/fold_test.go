package restart

import (
	"context"
	"fmt"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/internal/keys"
)

// Folding moves each per-key counter into its bucket, raising the bucket
// only where the old counter is higher, and deletes it; the counter space
// says so before and after; keys of another type under the prefix are left
// alone; a fold with another bucket count than the masters record changes
// nothing.
func TestFoldLegacyCountersKeepsEveryReadAtLeast(t *testing.T) {
	ctx := context.Background()
	s := clustertest.StartServer(t, clustertest.AOFAlways)
	rc := s.Client(t)
	const n = 450 // more than two batches
	want := map[int]fencing.Token{}
	for i := range n {
		key := fmt.Sprintf("order:%d", i)
		v := fencing.Token(1000 + i)
		if err := rc.Set(ctx, keys.Legacy(key), v.String(), 0).Err(); err != nil {
			t.Fatal(err)
		}
		b := keys.BucketOf(key, buckets)
		want[b] = max(want[b], v)
	}
	high := keys.BucketOf("order:0", buckets) // a bucket already above its old counters stays
	if err := rc.Set(ctx, keys.Bucket(high), "99999", 0).Err(); err != nil {
		t.Fatal(err)
	}
	want[high] = 99999
	if err := rc.HSet(ctx, keys.LegacyFencePrefix+"operators-hash", "a", "b").Err(); err != nil {
		t.Fatal(err)
	}
	if err := rc.Set(ctx, keys.FenceBuckets, "32", 0).Err(); err != nil {
		t.Fatal(err)
	}
	if _, err := FoldLegacyCounters(ctx, rc, buckets); err == nil || !strings.Contains(err.Error(), "32 fence buckets") {
		t.Fatalf("fold with 16 buckets on masters recording 32: %v; want the QLBUCKETS refusal", err)
	}
	if cs, err := ReadCounterSpace(ctx, rc); err != nil || cs.Legacy != n || cs.Buckets != 32 || cs.Present != 1 {
		t.Fatalf("after the refused fold: %+v, %v; want %d per-key counters left, 32 buckets, 1 present", cs, err, n)
	}
	if err := rc.Del(ctx, keys.FenceBuckets).Err(); err != nil {
		t.Fatal(err)
	}
	folded, err := FoldLegacyCounters(ctx, rc, buckets)
	if err != nil || folded != n {
		t.Fatalf("fold: %d, %v; want %d", folded, err, n)
	}
	cs, err := ReadCounterSpace(ctx, rc)
	if err != nil || cs.Legacy != 0 || cs.Buckets != buckets || cs.Present != len(want) {
		t.Fatalf("after the fold: %+v, %v; want 0 left, %d buckets recorded, %d present", cs, err, buckets, len(want))
	}
	m := Member{RDB: rc}
	for b, v := range want {
		if got := counter(t, m, keys.Bucket(b)); got != v {
			t.Fatalf("bucket %d: %d, want %d (the largest of its old counters and its own)", b, got, v)
		}
	}
	if typ := rc.Type(ctx, keys.LegacyFencePrefix+"operators-hash").Val(); typ != "hash" {
		t.Fatalf("a hash under the old prefix became %q: the fold touched it", typ)
	}
}
