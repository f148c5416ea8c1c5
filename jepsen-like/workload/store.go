package workload

import (
	"context"
	"errors"
	"sync"

	"github.com/quorumlock/quorumlock/fencing"
)

// Store is the register the register workload writes to.
type Store interface {
	// Write stores value under key with token; an error matching
	// fencing.ErrStaleToken means rejected (the write did not happen).
	Write(ctx context.Context, key string, token uint64, holder, value string) error
	// Read returns the value ("" if none); fencing.ErrStaleToken: rejected.
	Read(ctx context.Context, key string, token uint64, holder string) (string, error)
}

// FencedStore is a Store over a fencing.Store (by default an in-memory
// fencing.MemoryStore): stale tokens are rejected.
type FencedStore struct{ S fencing.Store }

// NewFencedStore returns a FencedStore over a fresh fencing.MemoryStore.
func NewFencedStore() FencedStore { return FencedStore{S: fencing.NewMemoryStore()} }

// Write writes through the fencing store.
func (f FencedStore) Write(ctx context.Context, key string, token uint64, holder, value string) error {
	return f.S.Write(ctx, key, fencing.Token(token), holder, []byte(value))
}

// Read reads through the fencing store; no value yet is "".
func (f FencedStore) Read(ctx context.Context, key string, token uint64, holder string) (string, error) {
	b, err := f.S.Read(ctx, key, fencing.Token(token), holder)
	if errors.Is(err, fencing.ErrNotFound) {
		return "", nil
	}
	return string(b), err
}

// PlainStore is a register that checks no token: what a plain Redlock user
// writes to.
type PlainStore struct {
	mu sync.Mutex
	m  map[string]string
}

// NewPlainStore returns an empty PlainStore.
func NewPlainStore() *PlainStore { return &PlainStore{m: make(map[string]string)} }

// Write stores value, whatever the token.
func (p *PlainStore) Write(_ context.Context, key string, _ uint64, _, value string) error {
	p.mu.Lock()
	defer p.mu.Unlock()
	p.m[key] = value
	return nil
}

// Read returns the value, whatever the token.
func (p *PlainStore) Read(_ context.Context, key string, _ uint64, _ string) (string, error) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.m[key], nil
}
