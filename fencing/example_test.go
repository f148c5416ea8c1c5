package fencing_test

import (
	"context"
	"errors"
	"fmt"

	"github.com/quorumlock/quorumlock/fencing"
)

// A holder paused past its lease writes after the next holder has: the store
// rejects the late write and keeps the newer value.
func ExampleMemoryStore() {
	ctx := context.Background()
	store := fencing.NewMemoryStore()

	_ = store.Write(ctx, "report.csv", 7, "worker-a", []byte("a's rows"))
	// worker-a pauses; its lease expires; worker-b acquires token 8.
	_ = store.Write(ctx, "report.csv", 8, "worker-b", []byte("b's rows"))
	// worker-a wakes up and writes again.
	err := store.Write(ctx, "report.csv", 7, "worker-a", []byte("a's late rows"))
	fmt.Println("late write stale:", errors.Is(err, fencing.ErrStaleToken))

	v, _ := store.Read(ctx, "report.csv", 8, "worker-b")
	fmt.Println("value:", string(v))
	// Output:
	// late write stale: true
	// value: b's rows
}

// A read registers its token: once the newer holder has read, the older one
// can no longer write, so a read-modify-write by the newer holder is safe.
func ExampleMemoryStore_Read() {
	ctx := context.Background()
	store := fencing.NewMemoryStore()

	_, err := store.Read(ctx, "counter", 5, "b")
	fmt.Println("empty:", errors.Is(err, fencing.ErrNotFound))
	err = store.Write(ctx, "counter", 4, "a", []byte("41"))
	fmt.Println("older write stale:", errors.Is(err, fencing.ErrStaleToken))
	fmt.Println("newer write:", store.Write(ctx, "counter", 5, "b", []byte("1")))
	// Output:
	// empty: true
	// older write stale: true
	// newer write: <nil>
}

func ExampleAccepts() {
	fmt.Println(fencing.Accepts(7, "a", 8, "b")) // higher token
	fmt.Println(fencing.Accepts(7, "a", 7, "a")) // same lease retrying
	fmt.Println(fencing.Accepts(7, "a", 7, "b")) // same token, other holder
	fmt.Println(fencing.Accepts(7, "a", 6, "a")) // lower token
	// Output:
	// true
	// true
	// false
	// false
}
