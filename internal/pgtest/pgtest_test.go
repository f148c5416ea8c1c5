package pgtest_test

import (
	"context"
	"testing"

	"github.com/jackc/pgx/v5"

	"github.com/quorumlock/quorumlock/internal/pgtest"
)

func TestMain(m *testing.M) { pgtest.Main(m) }

func TestPoolHasItsOwnEmptySchema(t *testing.T) {
	ctx := context.Background()
	a, b := pgtest.Pool(t), pgtest.Pool(t)
	if _, err := a.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	if _, err := a.Exec(ctx, "INSERT INTO t VALUES (1)"); err != nil {
		t.Fatal(err)
	}
	// b has a schema of its own: no table t there, and it can make its own.
	if _, err := b.Exec(ctx, "SELECT * FROM t"); err == nil {
		t.Fatal("the second pool sees the first pool's table")
	}
	if _, err := b.Exec(ctx, "CREATE TABLE t (x int)"); err != nil {
		t.Fatal(err)
	}
	var sa, sb string
	if err := a.QueryRow(ctx, "SELECT current_schema()").Scan(&sa); err != nil {
		t.Fatal(err)
	}
	if err := b.QueryRow(ctx, "SELECT current_schema()").Scan(&sb); err != nil {
		t.Fatal(err)
	}
	if sa == sb || sa == "public" {
		t.Fatalf("schemas %q and %q; want two distinct private schemas", sa, sb)
	}
}

func TestSchemaDroppedAfterTest(t *testing.T) {
	ctx := context.Background()
	var schema string
	t.Run("inner", func(t *testing.T) {
		if err := pgtest.Pool(t).QueryRow(ctx, "SELECT current_schema()").Scan(&schema); err != nil {
			t.Fatal(err)
		}
	})
	conn, err := pgx.Connect(ctx, pgtest.URL(t))
	if err != nil {
		t.Fatal(err)
	}
	defer conn.Close(ctx)
	var n int
	if err := conn.QueryRow(ctx, "SELECT count(*) FROM pg_namespace WHERE nspname = $1", schema).Scan(&n); err != nil {
		t.Fatal(err)
	}
	if n != 0 {
		t.Fatalf("schema %s still exists after its test ended", schema)
	}
}
