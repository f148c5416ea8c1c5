package suite

import "testing"

// The bucket loads' keys share the workload key's fence bucket, as the
// history records it.
func TestBucketSiblingsShareTheWorkloadKeysBucket(t *testing.T) {
	sib := bucketSiblings(workloadKey, 4)
	if len(sib) != 4 {
		t.Fatalf("%d siblings, want 4", len(sib))
	}
	for _, k := range sib {
		if k == workloadKey || bucketLabel(k) != bucketLabel(workloadKey) {
			t.Fatalf("sibling %q: bucket %s, the workload key's %s", k, bucketLabel(k), bucketLabel(workloadKey))
		}
	}
}
