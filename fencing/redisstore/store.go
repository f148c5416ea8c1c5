package redisstore

import (
	"context"
	_ "embed"
	"errors"
	"fmt"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/fencing"
)

// DefaultPrefix is the key prefix used unless WithPrefix says otherwise.
const DefaultPrefix = "quorumlock:fenced:"

var (
	//go:embed write.lua
	writeSource string
	writeScript = redis.NewScript(writeSource)

	//go:embed read.lua
	readSource string
	readScript = redis.NewScript(readSource)
)

// Store is a fencing.Store kept in Redis hashes (see the package doc for the
// layout). It is safe for concurrent use.
type Store struct {
	client redis.UniversalClient
	prefix string
}

var _ fencing.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithPrefix sets the prefix of the resources' keys; the default is
// DefaultPrefix. A resource r lives at key prefix+r; any prefix, even "", is
// allowed. Include a hash tag such
// as "{fenced}:" to keep every resource on one Redis Cluster slot.
func WithPrefix(p string) Option {
	return func(s *Store) { s.prefix = p }
}

// New returns a Store that keeps its resources in client. The store does not
// own client: closing it is the caller's job.
func New(client redis.UniversalClient, opts ...Option) *Store {
	s := &Store{client: client, prefix: DefaultPrefix}
	for _, o := range opts {
		o(s)
	}
	return s
}

// Key returns the Redis key of resource's hash.
func (s *Store) Key(resource string) string { return s.prefix + resource }

// Write stores value for resource under the accept rule of fencing.Store, in
// one atomic script. It returns an error wrapping fencing.ErrInvalidToken for
// invalid arguments, fencing.ErrStaleToken when the token is not accepted,
// ctx.Err() when ctx is done before the call, and the Redis error otherwise.
func (s *Store) Write(ctx context.Context, resource string, token fencing.Token, holder string, value []byte) error {
	if err := check(ctx, resource, token, holder); err != nil {
		return fmt.Errorf("redisstore: write %q: %w", resource, err)
	}
	if value == nil {
		value = []byte{}
	}
	res, err := writeScript.Run(ctx, s.client, []string{s.Key(resource)}, token.String(), holder, value).Slice()
	if err != nil {
		return fmt.Errorf("redisstore: write %q: %w", resource, err)
	}
	if _, err := status(res, token, holder); err != nil {
		return fmt.Errorf("redisstore: write %q: %w", resource, err)
	}
	return nil
}

// Read returns resource's value under the accept rule of fencing.Store and
// registers the token, in one atomic script. It returns an error wrapping
// fencing.ErrInvalidToken for invalid arguments, fencing.ErrStaleToken when the
// token is not accepted, fencing.ErrNotFound when the token is accepted but
// nothing was written yet, ctx.Err() when ctx is done before the call, and the
// Redis error otherwise.
func (s *Store) Read(ctx context.Context, resource string, token fencing.Token, holder string) ([]byte, error) {
	if err := check(ctx, resource, token, holder); err != nil {
		return nil, fmt.Errorf("redisstore: read %q: %w", resource, err)
	}
	res, err := readScript.Run(ctx, s.client, []string{s.Key(resource)}, token.String(), holder).Slice()
	if err != nil {
		return nil, fmt.Errorf("redisstore: read %q: %w", resource, err)
	}
	code, err := status(res, token, holder)
	if err != nil {
		return nil, fmt.Errorf("redisstore: read %q: %w", resource, err)
	}
	switch {
	case code == 2:
		return nil, fmt.Errorf("redisstore: read %q: %w", resource, fencing.ErrNotFound)
	case code == 1 && len(res) == 2:
		if v, ok := res[1].(string); ok {
			return []byte(v), nil
		}
	}
	return nil, fmt.Errorf("redisstore: read %q: unexpected script reply %v", resource, res)
}

// Highest returns the highest token accepted for resource, or 0 if none. It
// returns an error wrapping fencing.ErrInvalidToken for an empty resource name,
// ctx.Err() when ctx is done before the call, and the Redis error otherwise.
func (s *Store) Highest(ctx context.Context, resource string) (fencing.Token, error) {
	if resource == "" {
		return 0, fmt.Errorf("redisstore: highest: %w: empty resource name", fencing.ErrInvalidToken)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("redisstore: highest %q: %w", resource, err)
	}
	v, err := s.client.HGet(ctx, s.Key(resource), "highest").Result()
	if errors.Is(err, redis.Nil) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("redisstore: highest %q: %w", resource, err)
	}
	t, err := fencing.ParseToken(v)
	if err != nil {
		return 0, fmt.Errorf("redisstore: highest %q: corrupt hash field: %w", resource, err)
	}
	return t, nil
}

// check validates the arguments and fails early on a done context, so that a
// cancelled call never reaches Redis.
func check(ctx context.Context, resource string, token fencing.Token, holder string) error {
	if err := fencing.Validate(resource, token, holder); err != nil {
		return err
	}
	return ctx.Err()
}

// status decodes the first element of a script reply: it returns the status
// code for an accepted call (1 or 2) and an error wrapping
// fencing.ErrStaleToken for a rejected one ({0, highest, holder}).
func status(res []any, token fencing.Token, holder string) (int64, error) {
	if len(res) == 0 {
		return 0, errors.New("empty script reply")
	}
	code, ok := res[0].(int64)
	if !ok {
		return 0, fmt.Errorf("unexpected script reply %v", res)
	}
	if code != 0 {
		return code, nil
	}
	var highest int64
	var highestHolder string
	if len(res) == 3 {
		highest, _ = res[1].(int64)
		highestHolder, _ = res[2].(string)
	}
	return 0, fmt.Errorf("%w: token %d from holder %q, highest is %d from holder %q",
		fencing.ErrStaleToken, token, holder, highest, highestHolder)
}
