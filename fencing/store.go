package fencing

import (
	"context"
	"errors"
	"fmt"
)

// ErrStaleToken is returned (wrapped) by a Store when a write or read carries a
// token lower than the highest the store has seen for the resource, or equal to
// it but from another holder.
var ErrStaleToken = errors.New("fencing: stale token")

// ErrInvalidToken is returned (wrapped) for a zero token, a token above
// MaxToken, an empty resource or holder name, or an unparsable token.
var ErrInvalidToken = errors.New("fencing: invalid token")

// ErrNotFound is returned (wrapped) by Store.Read when the token is accepted
// but the resource has no value yet.
var ErrNotFound = errors.New("fencing: no value")

// Store is a resource guarded by fencing tokens. Each call carries the caller's
// token and a holder name (any stable identity of the lease, e.g. its token
// and process); the check and the effect are one atomic step.
//
// The accept rule, for the highest token H seen so far for the resource and
// the holder that presented it: a call with token T is accepted iff T > H, or
// T == H and the holder is the same. An accepted call raises H to T. A
// rejected call changes nothing and returns an error matching ErrStaleToken.
type Store interface {
	// Write stores value for resource under the accept rule.
	Write(ctx context.Context, resource string, token Token, holder string, value []byte) error
	// Read returns the resource's value under the accept rule and registers the
	// token, so that a stale holder's read-modify-write fails at the read and a
	// newer holder's read fences out older writers. It returns ErrNotFound
	// (after registering the token) when there is no value yet.
	Read(ctx context.Context, resource string, token Token, holder string) ([]byte, error)
	// Highest returns the highest token accepted for resource (0 if none).
	Highest(ctx context.Context, resource string) (Token, error)
}

// Accepts is the accept rule shared by every Store: it reports whether a call
// with token from holder is accepted when the highest token seen is highest,
// presented by highestHolder.
func Accepts(highest Token, highestHolder string, token Token, holder string) bool {
	return token > highest || (token == highest && holder == highestHolder)
}

// Validate checks the arguments every Store call shares.
func Validate(resource string, token Token, holder string) error {
	switch {
	case resource == "":
		return fmt.Errorf("%w: empty resource name", ErrInvalidToken)
	case holder == "":
		return fmt.Errorf("%w: empty holder name", ErrInvalidToken)
	case token == 0:
		return fmt.Errorf("%w: zero token", ErrInvalidToken)
	case token > MaxToken:
		return fmt.Errorf("%w: token above MaxToken", ErrInvalidToken)
	}
	return nil
}
