package fencing_test

import (
	"testing"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencingtest"
)

var _ fencing.Store = (*fencing.MemoryStore)(nil)

func TestMemoryStoreConformance(t *testing.T) {
	fencingtest.RunStoreConformance(t, func(*testing.T) fencing.Store {
		return fencing.NewMemoryStore()
	})
}
