package pgstore_test

import (
	"context"
	"errors"
	"fmt"
	"log"
	"os"

	"github.com/jackc/pgx/v5/pgxpool"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/fencing/pgstore"
)

// A worker writes its result under its lease's fencing token. (This example
// needs a server at DATABASE_URL, so it is compiled but not run by go test.)
func ExampleNew() {
	ctx := context.Background()
	pool, err := pgxpool.New(ctx, os.Getenv("DATABASE_URL"))
	if err != nil {
		log.Fatal(err)
	}
	defer pool.Close()

	store, err := pgstore.New(ctx, pool) // creates table quorumlock_fenced if missing
	if err != nil {
		log.Fatal(err)
	}
	var token fencing.Token = 42 // from the lock's lease
	err = store.Write(ctx, "reports/2024-06", token, "worker-7", []byte("..."))
	switch {
	case errors.Is(err, fencing.ErrStaleToken):
		fmt.Println("lost the lock: a newer holder has written")
	case err != nil:
		log.Fatal(err)
	}
}
