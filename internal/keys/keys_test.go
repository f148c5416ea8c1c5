package keys

import "testing"

// BucketOf is part of the on-disk format: its values are pinned, so that a
// change of hash (which would let tokens go back) fails here first. FNV-1a of
// "" is the offset basis 0x811c9dc5, 453 modulo 1024.
func TestBucketOfIsStable(t *testing.T) {
	for _, c := range []struct {
		key  string
		b    int
		want int
	}{
		{"", 1024, 453}, {"invoice:7", 1024, 907}, {"k", 1024, 234}, {"order:123456", 4096, 928}, {"k", 1, 0},
	} {
		if got := BucketOf(c.key, c.b); got != c.want {
			t.Errorf("BucketOf(%q, %d) = %d, want %d", c.key, c.b, got, c.want)
		}
	}
}
