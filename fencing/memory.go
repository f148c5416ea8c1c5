package fencing

import (
	"context"
	"fmt"
	"sync"
)

// MemoryStore is a Store kept in process memory, for examples, tests and
// single-process programs. The zero value is not usable; call NewMemoryStore.
// It is safe for concurrent use. Values are copied on the way in and out, so
// callers may reuse their slices.
type MemoryStore struct {
	mu        sync.Mutex
	resources map[string]*memoryEntry
}

type memoryEntry struct {
	highest  Token
	holder   string
	value    []byte
	hasValue bool
}

// NewMemoryStore returns an empty MemoryStore.
func NewMemoryStore() *MemoryStore {
	return &MemoryStore{resources: make(map[string]*memoryEntry)}
}

// Write stores a copy of value for resource under the accept rule (see Store).
// It returns an error wrapping ErrInvalidToken for invalid arguments,
// ErrStaleToken when the token is not accepted, and ctx.Err() (wrapped) when
// ctx is already done; in every error case nothing changes.
func (s *MemoryStore) Write(ctx context.Context, resource string, token Token, holder string, value []byte) error {
	if err := Validate(resource, token, holder); err != nil {
		return err
	}
	if err := ctx.Err(); err != nil {
		return fmt.Errorf("fencing: memory write %q: %w", resource, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.admit(resource, token, holder)
	if err != nil {
		return err
	}
	e.value = append(make([]byte, 0, len(value)), value...)
	e.hasValue = true
	return nil
}

// Read returns a copy of resource's value under the accept rule and registers
// token (see Store). It returns an error wrapping ErrInvalidToken for invalid
// arguments, ErrStaleToken when the token is not accepted, ErrNotFound when
// the token was accepted but nothing was written yet, and ctx.Err() (wrapped)
// when ctx is already done.
func (s *MemoryStore) Read(ctx context.Context, resource string, token Token, holder string) ([]byte, error) {
	if err := Validate(resource, token, holder); err != nil {
		return nil, err
	}
	if err := ctx.Err(); err != nil {
		return nil, fmt.Errorf("fencing: memory read %q: %w", resource, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	e, err := s.admit(resource, token, holder)
	if err != nil {
		return nil, err
	}
	if !e.hasValue {
		return nil, fmt.Errorf("%w: resource %q", ErrNotFound, resource)
	}
	return append(make([]byte, 0, len(e.value)), e.value...), nil
}

// Highest returns the highest token accepted for resource, or 0 if none. It
// returns an error wrapping ErrInvalidToken for an empty resource name and
// ctx.Err() (wrapped) when ctx is already done.
func (s *MemoryStore) Highest(ctx context.Context, resource string) (Token, error) {
	if resource == "" {
		return 0, fmt.Errorf("%w: empty resource name", ErrInvalidToken)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("fencing: memory highest %q: %w", resource, err)
	}
	s.mu.Lock()
	defer s.mu.Unlock()
	if e, ok := s.resources[resource]; ok {
		return e.highest, nil
	}
	return 0, nil
}

// admit applies the accept rule and, on success, registers token and holder.
// s.mu must be held.
func (s *MemoryStore) admit(resource string, token Token, holder string) (*memoryEntry, error) {
	e, ok := s.resources[resource]
	if !ok {
		e = &memoryEntry{}
		s.resources[resource] = e
	} else if !Accepts(e.highest, e.holder, token, holder) {
		return nil, staleError(resource, token, holder, e.highest, e.holder)
	}
	e.highest, e.holder = token, holder
	return e, nil
}

// staleError is the error MemoryStore returns for a rejected call.
func staleError(resource string, token Token, holder string, highest Token, highestHolder string) error {
	return fmt.Errorf("%w: resource %q: token %d from holder %q, highest is %d from holder %q",
		ErrStaleToken, resource, token, holder, highest, highestHolder)
}
