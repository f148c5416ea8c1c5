package fencingtest

import (
	"bytes"
	"context"
	"errors"
	"testing"

	"github.com/quorumlock/quorumlock/fencing"
)

// RunStoreConformance runs the conformance suite against the stores made by
// newStore, one subtest per property. newStore is called once per subtest and
// must return an empty store (or one whose resources do not overlap with any
// other subtest's); it may register cleanups on the t it is given.
//
// The suite checks the accept rule (higher tokens accepted, lower rejected,
// equal tokens accepted only from the same holder), that rejected calls change
// nothing, that Read registers its token and reports fencing.ErrNotFound on an
// empty resource, that invalid arguments fail with fencing.ErrInvalidToken,
// that resources are independent, that values are copied and binary-safe, the
// paused-holder scenario, linearizable behaviour under concurrent writers,
// and that a call with an already-cancelled context fails with an error
// matching context.Canceled and changes nothing.
func RunStoreConformance(t *testing.T, newStore func(t *testing.T) fencing.Store) {
	t.Helper()
	tests := []struct {
		name string
		run  func(t *testing.T, s fencing.Store)
	}{
		{"FirstWriteAccepted", testFirstWriteAccepted},
		{"HigherTokenAccepted", testHigherTokenAccepted},
		{"LowerTokenRejected", testLowerTokenRejected},
		{"EqualTokenSameHolderAccepted", testEqualTokenSameHolder},
		{"EqualTokenOtherHolderRejected", testEqualTokenOtherHolder},
		{"ReadNotFoundRegistersToken", testReadNotFoundRegistersToken},
		{"ReadRegistersToken", testReadRegistersToken},
		{"ReadRejectsStaleToken", testReadRejectsStale},
		{"InvalidArguments", testInvalidArguments},
		{"MaxTokenAccepted", testMaxToken},
		{"ResourcesIndependent", testResourcesIndependent},
		{"ValuesCopiedAndBinarySafe", testValues},
		{"EmptyValueIsAValue", testEmptyValue},
		{"PausedHolder", testPausedHolder},
		{"ConcurrentWriters", testConcurrentWriters},
		{"CancelledContext", testCancelledContext},
	}
	for _, tc := range tests {
		t.Run(tc.name, func(t *testing.T) {
			tc.run(t, newStore(t))
		})
	}
}

// Helpers. Each fails the test with a message naming the call.

func mustWrite(t *testing.T, s fencing.Store, resource string, tok fencing.Token, holder, value string) {
	t.Helper()
	if err := s.Write(context.Background(), resource, tok, holder, []byte(value)); err != nil {
		t.Fatalf("Write(%q, %d, %q, %q) = %v, want nil", resource, tok, holder, value, err)
	}
}

func wantWriteErr(t *testing.T, s fencing.Store, resource string, tok fencing.Token, holder, value string, want error) {
	t.Helper()
	err := s.Write(context.Background(), resource, tok, holder, []byte(value))
	if !errors.Is(err, want) {
		t.Fatalf("Write(%q, %d, %q, %q) = %v, want an error matching %v", resource, tok, holder, value, err, want)
	}
}

func wantRead(t *testing.T, s fencing.Store, resource string, tok fencing.Token, holder, want string) {
	t.Helper()
	got, err := s.Read(context.Background(), resource, tok, holder)
	if err != nil {
		t.Fatalf("Read(%q, %d, %q) = %v, want %q", resource, tok, holder, err, want)
	}
	if !bytes.Equal(got, []byte(want)) {
		t.Fatalf("Read(%q, %d, %q) = %q, want %q", resource, tok, holder, got, want)
	}
}

func wantReadErr(t *testing.T, s fencing.Store, resource string, tok fencing.Token, holder string, want error) {
	t.Helper()
	got, err := s.Read(context.Background(), resource, tok, holder)
	if !errors.Is(err, want) {
		t.Fatalf("Read(%q, %d, %q) = %q, %v; want an error matching %v", resource, tok, holder, got, err, want)
	}
}

func wantHighest(t *testing.T, s fencing.Store, resource string, want fencing.Token) {
	t.Helper()
	got, err := s.Highest(context.Background(), resource)
	if err != nil {
		t.Fatalf("Highest(%q) = %v, want %d", resource, err, want)
	}
	if got != want {
		t.Fatalf("Highest(%q) = %d, want %d", resource, got, want)
	}
}

func testFirstWriteAccepted(t *testing.T, s fencing.Store) {
	wantHighest(t, s, "r", 0)
	mustWrite(t, s, "r", 1, "a", "v1")
	wantHighest(t, s, "r", 1)
	wantRead(t, s, "r", 1, "a", "v1")
}

func testHigherTokenAccepted(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 3, "a", "v3")
	mustWrite(t, s, "r", 4, "b", "v4")
	mustWrite(t, s, "r", 10, "c", "v10")
	mustWrite(t, s, "r", 11, "c", "v11") // the same holder with a higher token
	wantHighest(t, s, "r", 11)
	wantRead(t, s, "r", 11, "c", "v11")
}

func testLowerTokenRejected(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 5, "b", "v5")
	wantWriteErr(t, s, "r", 4, "a", "v4", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", 4, "b", "v4-same-holder", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", 1, "b", "v1", fencing.ErrStaleToken)
	wantHighest(t, s, "r", 5)
	wantRead(t, s, "r", 5, "b", "v5")
}

func testEqualTokenSameHolder(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 3, "a", "first")
	mustWrite(t, s, "r", 3, "a", "retry") // an idempotent retry of the same lease
	mustWrite(t, s, "r", 3, "a", "retry")
	wantHighest(t, s, "r", 3)
	wantRead(t, s, "r", 3, "a", "retry")
}

func testEqualTokenOtherHolder(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 3, "a", "a's")
	wantWriteErr(t, s, "r", 3, "b", "b's", fencing.ErrStaleToken)
	wantHighest(t, s, "r", 3)
	wantRead(t, s, "r", 3, "a", "a's")
}

func testReadNotFoundRegistersToken(t *testing.T, s fencing.Store) {
	wantReadErr(t, s, "r", 5, "a", fencing.ErrNotFound)
	wantHighest(t, s, "r", 5)
	// The registered token fences out older holders, for reads and writes,
	// and another holder presenting the same token. A rejected read of a
	// resource without a value is stale, not "not found".
	wantReadErr(t, s, "r", 4, "b", fencing.ErrStaleToken)
	wantReadErr(t, s, "r", 5, "b", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", 4, "b", "v4", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", 5, "b", "v5b", fencing.ErrStaleToken)
	wantReadErr(t, s, "r", 5, "a", fencing.ErrNotFound) // the holder itself may read again
	mustWrite(t, s, "r", 5, "a", "v5")
	wantRead(t, s, "r", 5, "a", "v5")
}

func testReadRegistersToken(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 3, "a", "v3")
	wantRead(t, s, "r", 5, "b", "v3") // b's read-modify-write starts
	wantHighest(t, s, "r", 5)
	wantWriteErr(t, s, "r", 4, "c", "v4", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", 3, "a", "v3-late", fencing.ErrStaleToken)
	mustWrite(t, s, "r", 5, "b", "v5") // ... and completes
	wantRead(t, s, "r", 5, "b", "v5")
	wantHighest(t, s, "r", 5)
}

func testReadRejectsStale(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", 7, "b", "v7")
	wantReadErr(t, s, "r", 6, "a", fencing.ErrStaleToken)
	wantReadErr(t, s, "r", 7, "a", fencing.ErrStaleToken)
	wantHighest(t, s, "r", 7)
	wantRead(t, s, "r", 7, "b", "v7")
}

func testInvalidArguments(t *testing.T, s fencing.Store) {
	ctx := context.Background()
	cases := []struct {
		name     string
		resource string
		token    fencing.Token
		holder   string
	}{
		{"EmptyResource", "", 1, "a"},
		{"EmptyHolder", "r", 1, ""},
		{"ZeroToken", "r", 0, "a"},
		{"TokenAboveMax", "r", fencing.MaxToken + 1, "a"},
		{"HugeToken", "r", ^fencing.Token(0), "a"},
	}
	for _, c := range cases {
		t.Run(c.name, func(t *testing.T) {
			if err := s.Write(ctx, c.resource, c.token, c.holder, []byte("v")); !errors.Is(err, fencing.ErrInvalidToken) {
				t.Errorf("Write(%q, %d, %q) = %v, want ErrInvalidToken", c.resource, c.token, c.holder, err)
			}
			if _, err := s.Read(ctx, c.resource, c.token, c.holder); !errors.Is(err, fencing.ErrInvalidToken) {
				t.Errorf("Read(%q, %d, %q) = %v, want ErrInvalidToken", c.resource, c.token, c.holder, err)
			}
		})
	}
	if _, err := s.Highest(ctx, ""); !errors.Is(err, fencing.ErrInvalidToken) {
		t.Errorf(`Highest("") = %v, want ErrInvalidToken`, err)
	}
	wantHighest(t, s, "r", 0) // nothing was registered
}

func testMaxToken(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r", fencing.MaxToken-1, "a", "almost")
	mustWrite(t, s, "r", fencing.MaxToken, "b", "max")
	wantWriteErr(t, s, "r", fencing.MaxToken-1, "a", "late", fencing.ErrStaleToken)
	wantWriteErr(t, s, "r", fencing.MaxToken, "a", "other", fencing.ErrStaleToken)
	wantHighest(t, s, "r", fencing.MaxToken)
	wantRead(t, s, "r", fencing.MaxToken, "b", "max")
}

func testResourcesIndependent(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "r1", 10, "a", "one")
	mustWrite(t, s, "r2", 1, "b", "two")
	wantReadErr(t, s, "r3", 1, "c", fencing.ErrNotFound)
	wantHighest(t, s, "r1", 10)
	wantHighest(t, s, "r2", 1)
	wantHighest(t, s, "r3", 1)
	wantHighest(t, s, "r4", 0)
	wantRead(t, s, "r1", 10, "a", "one")
	wantRead(t, s, "r2", 1, "b", "two")
	// Names that share prefixes or contain separators stay apart.
	mustWrite(t, s, "r1:x", 2, "c", "three")
	mustWrite(t, s, "a/b {c}", 2, "c", "four")
	wantRead(t, s, "r1:x", 2, "c", "three")
	wantRead(t, s, "a/b {c}", 2, "c", "four")
	wantHighest(t, s, "r1", 10)
}

func testValues(t *testing.T, s fencing.Store) {
	ctx := context.Background()
	in := make([]byte, 256)
	for i := range in {
		in[i] = byte(i)
	}
	want := bytes.Clone(in)
	if err := s.Write(ctx, "r", 1, "a", in); err != nil {
		t.Fatalf("Write: %v", err)
	}
	in[0], in[255] = 'X', 'Y' // the store must not keep the caller's slice
	got, err := s.Read(ctx, "r", 1, "a")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !bytes.Equal(got, want) {
		t.Fatalf("Read = %v, want the 256 bytes 0..255", got)
	}
	got[1] = 'Z' // nor hand out its own
	again, err := s.Read(ctx, "r", 1, "a")
	if err != nil {
		t.Fatalf("Read: %v", err)
	}
	if !bytes.Equal(again, want) {
		t.Fatalf("second Read = %v, want the 256 bytes 0..255", again)
	}
}

func testEmptyValue(t *testing.T, s fencing.Store) {
	ctx := context.Background()
	for i, v := range [][]byte{nil, {}} {
		resource := []string{"nil", "empty"}[i]
		if err := s.Write(ctx, resource, 1, "a", v); err != nil {
			t.Fatalf("Write(%q, %#v): %v", resource, v, err)
		}
		got, err := s.Read(ctx, resource, 1, "a")
		if err != nil || len(got) != 0 {
			t.Fatalf("Read(%q) = %q, %v; want an empty value and no error", resource, got, err)
		}
	}
}

// testPausedHolder is the scenario fencing exists for: holder A (token 7)
// pauses past its lease, B acquires the lock (token 8) and writes, then A
// wakes up and writes. A's late write must fail and B's value must survive.
func testPausedHolder(t *testing.T, s fencing.Store) {
	mustWrite(t, s, "file", 7, "A", "A: before the pause")
	mustWrite(t, s, "file", 8, "B", "B: new holder")
	wantWriteErr(t, s, "file", 7, "A", "A: after the pause", fencing.ErrStaleToken)
	wantReadErr(t, s, "file", 7, "A", fencing.ErrStaleToken)
	wantHighest(t, s, "file", 8)
	wantRead(t, s, "file", 8, "B", "B: new holder")
}

func testCancelledContext(t *testing.T, s fencing.Store) {
	ctx, cancel := context.WithCancel(context.Background())
	cancel()
	if err := s.Write(ctx, "r", 1, "a", []byte("v")); !errors.Is(err, context.Canceled) {
		t.Errorf("Write with a cancelled context = %v, want an error matching context.Canceled", err)
	}
	if _, err := s.Read(ctx, "r", 2, "a"); !errors.Is(err, context.Canceled) {
		t.Errorf("Read with a cancelled context = %v, want an error matching context.Canceled", err)
	}
	if _, err := s.Highest(ctx, "r"); !errors.Is(err, context.Canceled) {
		t.Errorf("Highest with a cancelled context = %v, want an error matching context.Canceled", err)
	}
	wantHighest(t, s, "r", 0)
}
