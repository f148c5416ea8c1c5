package pgstore

import (
	"context"
	"errors"
	"fmt"
	"regexp"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgconn"
	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quorumlock/quorumlock/fencing"
)

// DefaultTable is the table used unless WithTable says otherwise.
const DefaultTable = "quorumlock_fenced"

// ErrInvalidArgument is returned (wrapped) by New for an invalid option.
var ErrInvalidArgument = errors.New("pgstore: invalid argument")

// Store is a fencing.Store kept in a PostgreSQL table (see the package doc).
// It is safe for concurrent use.
type Store struct {
	pool  *pgxpool.Pool
	table string

	createSQL, writeSQL, readSQL, highestSQL string
}

var _ fencing.Store = (*Store)(nil)

// Option configures a Store.
type Option func(*Store)

// WithTable sets the name of the table; the default is DefaultTable. The name
// must be a plain lower-case SQL identifier ([a-z_][a-z0-9_]*, at most 63
// bytes); it is resolved through the connection's search_path. New rejects
// anything else with ErrInvalidArgument.
func WithTable(name string) Option {
	return func(s *Store) { s.table = name }
}

var identifier = regexp.MustCompile(`^[a-z_][a-z0-9_]{0,62}$`)

// New returns a Store keeping its resources in pool's database, creating the
// table if it does not exist. The store does not own pool: closing it is the
// caller's job. New returns an error wrapping ErrInvalidArgument for an
// invalid table name, and the database error (wrapped) if it cannot create
// the table.
func New(ctx context.Context, pool *pgxpool.Pool, opts ...Option) (*Store, error) {
	if pool == nil {
		return nil, fmt.Errorf("%w: nil pool", ErrInvalidArgument)
	}
	s := &Store{pool: pool, table: DefaultTable}
	for _, o := range opts {
		o(s)
	}
	if !identifier.MatchString(s.table) {
		return nil, fmt.Errorf("%w: table name %q is not a plain lower-case SQL identifier", ErrInvalidArgument, s.table)
	}
	s.createSQL, s.writeSQL, s.readSQL, s.highestSQL = statements(s.table)
	if err := s.createTable(ctx); err != nil {
		return nil, err
	}
	return s, nil
}

// statements returns the SQL of the store for table, a valid identifier.
func statements(table string) (create, write, read, highest string) {
	create = `CREATE TABLE IF NOT EXISTS ` + table + ` (
	resource text PRIMARY KEY,
	highest bigint NOT NULL,
	holder text NOT NULL,
	value bytea
)`
	// The WHERE clause of both upserts is the accept rule, fencing.Accepts.
	write = `INSERT INTO ` + table + ` AS t (resource, highest, holder, value)
VALUES ($1, $2, $3, $4)
ON CONFLICT (resource) DO UPDATE
SET highest = EXCLUDED.highest, holder = EXCLUDED.holder, value = EXCLUDED.value
WHERE t.highest < EXCLUDED.highest
   OR (t.highest = EXCLUDED.highest AND t.holder = EXCLUDED.holder)
RETURNING t.highest`
	read = `INSERT INTO ` + table + ` AS t (resource, highest, holder)
VALUES ($1, $2, $3)
ON CONFLICT (resource) DO UPDATE
SET highest = EXCLUDED.highest, holder = EXCLUDED.holder
WHERE t.highest < EXCLUDED.highest
   OR (t.highest = EXCLUDED.highest AND t.holder = EXCLUDED.holder)
RETURNING t.value`
	highest = `SELECT highest FROM ` + table + ` WHERE resource = $1`
	return
}

// createTable runs CREATE TABLE IF NOT EXISTS. Two sessions creating the
// same table at once can make one of them fail on the catalog: a unique
// violation (23505), "relation already exists" (42P07) or "type already
// exists" (42710, the table's row type); the table then exists, which a
// second attempt confirms.
func (s *Store) createTable(ctx context.Context) error {
	_, err := s.pool.Exec(ctx, s.createSQL)
	var pgErr *pgconn.PgError
	if errors.As(err, &pgErr) && (pgErr.Code == "23505" || pgErr.Code == "42P07" || pgErr.Code == "42710") {
		_, err = s.pool.Exec(ctx, s.createSQL)
	}
	if err != nil {
		return fmt.Errorf("pgstore: create table %s: %w", s.table, err)
	}
	return nil
}

// Table returns the name of the store's table.
func (s *Store) Table() string { return s.table }

// Write stores value for resource under the accept rule of fencing.Store, in
// one statement. A nil value is stored as an empty one. It returns an error
// wrapping fencing.ErrInvalidToken for invalid arguments,
// fencing.ErrStaleToken when the token is not accepted, ctx.Err() when ctx is
// done before the call, and the database error otherwise.
func (s *Store) Write(ctx context.Context, resource string, token fencing.Token, holder string, value []byte) error {
	if err := check(ctx, resource, token, holder); err != nil {
		return fmt.Errorf("pgstore: write %q: %w", resource, err)
	}
	if value == nil {
		value = []byte{} // NULL means "no value yet"
	}
	var h int64
	err := s.pool.QueryRow(ctx, s.writeSQL, resource, int64(token), holder, value).Scan(&h)
	if err != nil {
		return fmt.Errorf("pgstore: write %q: %w", resource, rejected(err, token, holder))
	}
	return nil
}

// Read returns resource's value under the accept rule of fencing.Store and
// registers the token, in one statement that leaves the value unchanged. It
// returns an error wrapping fencing.ErrInvalidToken for invalid arguments,
// fencing.ErrStaleToken when the token is not accepted, fencing.ErrNotFound
// when the token is accepted but nothing was written yet, ctx.Err() when ctx
// is done before the call, and the database error otherwise.
func (s *Store) Read(ctx context.Context, resource string, token fencing.Token, holder string) ([]byte, error) {
	if err := check(ctx, resource, token, holder); err != nil {
		return nil, fmt.Errorf("pgstore: read %q: %w", resource, err)
	}
	var v *[]byte
	err := s.pool.QueryRow(ctx, s.readSQL, resource, int64(token), holder).Scan(&v)
	if err != nil {
		return nil, fmt.Errorf("pgstore: read %q: %w", resource, rejected(err, token, holder))
	}
	if v == nil {
		return nil, fmt.Errorf("pgstore: read %q: %w", resource, fencing.ErrNotFound)
	}
	if *v == nil {
		return []byte{}, nil
	}
	return *v, nil
}

// Highest returns the highest token accepted for resource, or 0 if none. It
// returns an error wrapping fencing.ErrInvalidToken for an empty resource name,
// ctx.Err() when ctx is done before the call, and the database error
// otherwise.
func (s *Store) Highest(ctx context.Context, resource string) (fencing.Token, error) {
	if resource == "" {
		return 0, fmt.Errorf("pgstore: highest: %w: empty resource name", fencing.ErrInvalidToken)
	}
	if err := ctx.Err(); err != nil {
		return 0, fmt.Errorf("pgstore: highest %q: %w", resource, err)
	}
	var h int64
	err := s.pool.QueryRow(ctx, s.highestSQL, resource).Scan(&h)
	if errors.Is(err, pgx.ErrNoRows) {
		return 0, nil
	}
	if err != nil {
		return 0, fmt.Errorf("pgstore: highest %q: %w", resource, err)
	}
	return fencing.Token(h), nil
}

// check validates the arguments and fails early on a done context, so that a
// cancelled call never reaches the database.
func check(ctx context.Context, resource string, token fencing.Token, holder string) error {
	if err := fencing.Validate(resource, token, holder); err != nil {
		return err
	}
	return ctx.Err()
}

// rejected turns "no row back" from an upsert into fencing.ErrStaleToken.
func rejected(err error, token fencing.Token, holder string) error {
	if errors.Is(err, pgx.ErrNoRows) {
		return fmt.Errorf("%w: token %d from holder %q is below the highest token, or equal to it from another holder",
			fencing.ErrStaleToken, token, holder)
	}
	return err
}
