// Package fencingtest holds the conformance suite every fencing.Store
// implementation runs, so that the in-memory, Redis and PostgreSQL stores are
// held to one accept rule (see fencing.Store and docs/fencing-stores.md).
//
// An implementation's test calls RunStoreConformance with a constructor that
// returns a fresh, empty store for each subtest:
//
//	func TestConformance(t *testing.T) {
//		fencingtest.RunStoreConformance(t, func(t *testing.T) fencing.Store {
//			return mystore.New(...)
//		})
//	}
package fencingtest
