package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"testing"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/fencingtest"
	"github.com/quorumlock/quorumlock/fencing/pgstore"
	"github.com/quorumlock/quorumlock/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

// TestConformance runs the suite against a real PostgreSQL server; each
// subtest gets its own schema.
func TestConformance(t *testing.T) {
	fencingtest.RunStoreConformance(t, func(t *testing.T) fencing.Store {
		s, err := pgstore.New(context.Background(), pgtest.Pool(t))
		if err != nil {
			t.Fatal(err)
		}
		return s
	})
}

func TestNewRejectsInvalidTable(t *testing.T) {
	pool := pgtest.Pool(t)
	for _, name := range []string{"", "Fenced", "1fenced", "fenced; DROP TABLE x", `"fenced"`, "public.fenced", "fenced-tokens", strings.Repeat("x", 64)} {
		if _, err := pgstore.New(context.Background(), pool, pgstore.WithTable(name)); !errors.Is(err, pgstore.ErrInvalidArgument) {
			t.Errorf("New(WithTable(%q)) = %v, want ErrInvalidArgument", name, err)
		}
	}
	if _, err := pgstore.New(context.Background(), nil); !errors.Is(err, pgstore.ErrInvalidArgument) {
		t.Errorf("New(nil pool) = %v, want ErrInvalidArgument", err)
	}
}

// TestTableLayout pins the documented table: its name and columns.
func TestTableLayout(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	for _, table := range []string{pgstore.DefaultTable, "my_fences_2"} {
		var opts []pgstore.Option
		if table != pgstore.DefaultTable {
			opts = append(opts, pgstore.WithTable(table))
		}
		s, err := pgstore.New(ctx, pool, opts...)
		if err != nil {
			t.Fatal(err)
		}
		if s.Table() != table {
			t.Fatalf("Table() = %q, want %q", s.Table(), table)
		}
		rows, err := pool.Query(ctx, `SELECT column_name || ' ' || data_type || ' ' || is_nullable
			FROM information_schema.columns WHERE table_schema = current_schema() AND table_name = $1
			ORDER BY ordinal_position`, table)
		if err != nil {
			t.Fatal(err)
		}
		var cols []string
		for rows.Next() {
			var c string
			if err := rows.Scan(&c); err != nil {
				t.Fatal(err)
			}
			cols = append(cols, c)
		}
		if err := rows.Err(); err != nil {
			t.Fatal(err)
		}
		want := "[resource text NO highest bigint NO holder text NO value bytea YES]"
		if got := fmt.Sprint(cols); got != want {
			t.Fatalf("columns of %s = %s, want %s", table, got, want)
		}
		// The value column is NULL after a read, set after a write.
		if _, err := s.Read(ctx, "doc", 3, "a"); !errors.Is(err, fencing.ErrNotFound) {
			t.Fatalf("Read of empty resource = %v, want ErrNotFound", err)
		}
		if err := s.Write(ctx, "doc", 4, "b", []byte("v")); err != nil {
			t.Fatal(err)
		}
		var highest int64
		var holder string
		var value []byte
		if err := pool.QueryRow(ctx, "SELECT highest, holder, value FROM "+table+" WHERE resource = 'doc'").Scan(&highest, &holder, &value); err != nil {
			t.Fatal(err)
		}
		if highest != 4 || holder != "b" || string(value) != "v" {
			t.Fatalf("row = %d, %q, %q; want 4, b, v", highest, holder, value)
		}
	}
}

// TestNewConcurrently: many processes starting at once all create the table.
func TestNewConcurrently(t *testing.T) {
	pool := pgtest.Pool(t)
	var wg sync.WaitGroup
	for range 8 {
		wg.Go(func() {
			if _, err := pgstore.New(context.Background(), pool, pgstore.WithTable("raced")); err != nil {
				t.Errorf("New: %v", err)
			}
		})
	}
	wg.Wait()
}

// TestSharedTable: separate Store values (as in separate
// processes) sharing a table see each other's tokens.
func TestSharedTable(t *testing.T) {
	ctx := context.Background()
	pool := pgtest.Pool(t)
	a, err := pgstore.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	b, err := pgstore.New(ctx, pool)
	if err != nil {
		t.Fatal(err)
	}
	if err := a.Write(ctx, "doc", 8, "B", []byte("b")); err != nil {
		t.Fatal(err)
	}
	if err := b.Write(ctx, "doc", 7, "A", []byte("a")); !errors.Is(err, fencing.ErrStaleToken) {
		t.Fatalf("stale write through a second Store = %v, want ErrStaleToken", err)
	}
}
