package pgtest

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"fmt"
	"net/url"
	"os"
	"strings"
	"sync"
	"sync/atomic"
	"testing"
	"time"

	"github.com/jackc/pgx/v5"
	"github.com/jackc/pgx/v5/pgxpool"
)

// EnvURL names the environment variable with the URL of an existing server
// to test against instead of a private one.
const EnvURL = "QUORUMLOCK_TEST_POSTGRES_URL"

var (
	mainRunning atomic.Bool

	mu      sync.Mutex
	started bool
	env     *environment // valid when started and setupErr == nil
	envErr  error
	counter atomic.Int64
)

// environment is what the tests of one binary share.
type environment struct {
	baseURL string        // superuser URL of the server
	admin   *pgxpool.Pool // creates and drops the tests' schemas
	server  *server       // nil when EnvURL is used
}

// Main runs the tests of m and then stops the private server, if one was
// started, and exits with the tests' exit code. Call it from TestMain.
func Main(m *testing.M) {
	mainRunning.Store(true)
	code := m.Run()
	shutdown()
	os.Exit(code)
}

// URL returns the URL of a fresh, empty schema for t: connections made with
// it have the schema first on their search_path. The schema is dropped with
// everything in it when t ends. URL fails t when no server is available.
func URL(t testing.TB) string {
	t.Helper()
	e, err := setup()
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	var b [4]byte
	_, _ = rand.Read(b[:])
	schema := fmt.Sprintf("pgtest_%d_%d_%s", os.Getpid(), counter.Add(1), hex.EncodeToString(b[:]))
	ident := pgx.Identifier{schema}.Sanitize()
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	if _, err := e.admin.Exec(ctx, "CREATE SCHEMA "+ident); err != nil {
		t.Fatalf("pgtest: create schema %s: %v", schema, err)
	}
	t.Cleanup(func() {
		ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
		defer cancel()
		if _, err := e.admin.Exec(ctx, "DROP SCHEMA "+ident+" CASCADE"); err != nil {
			t.Errorf("pgtest: drop schema %s: %v", schema, err)
		}
	})
	u, err := withSearchPath(e.baseURL, schema)
	if err != nil {
		t.Fatalf("pgtest: %v", err)
	}
	return u
}

// Pool returns a connection pool for a fresh, empty schema (see URL). The pool
// is closed, and then the schema dropped, when t ends.
func Pool(t testing.TB) *pgxpool.Pool {
	t.Helper()
	u := URL(t)
	ctx, cancel := context.WithTimeout(context.Background(), 30*time.Second)
	defer cancel()
	pool, err := pgxpool.New(ctx, u)
	if err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	t.Cleanup(pool.Close) // runs before the schema's cleanup
	if err := pool.Ping(ctx); err != nil {
		t.Fatalf("pgtest: connect: %v", err)
	}
	return pool
}

// withSearchPath adds "-c search_path=schema" to the options startup
// parameter of a postgres:// URL.
func withSearchPath(raw, schema string) (string, error) {
	u, err := url.Parse(raw)
	if err != nil {
		return "", fmt.Errorf("parse URL: %w", err)
	}
	q := u.Query()
	q.Set("options", strings.TrimSpace(q.Get("options")+" -c search_path="+schema))
	u.RawQuery = strings.ReplaceAll(q.Encode(), "+", "%20") // libpq-style URLs take no "+" for a space
	return u.String(), nil
}

// setup connects to the server named by EnvURL or starts the private one, the
// first time it is called in the test binary; later calls return the result
// (or the error) of the first.
func setup() (*environment, error) {
	if !mainRunning.Load() {
		return nil, fmt.Errorf("the package's TestMain must call pgtest.Main(m), which stops the PostgreSQL server after the tests")
	}
	mu.Lock()
	defer mu.Unlock()
	if !started {
		started = true
		env, envErr = newEnvironment()
	}
	return env, envErr
}

func newEnvironment() (*environment, error) {
	ctx, cancel := context.WithTimeout(context.Background(), 2*time.Minute)
	defer cancel()
	e := &environment{baseURL: os.Getenv(EnvURL)}
	if e.baseURL == "" {
		s, err := startServer(ctx)
		if err != nil {
			return nil, err
		}
		e.server, e.baseURL = s, s.url()
	}
	admin, err := pgxpool.New(ctx, e.baseURL)
	if err == nil {
		err = admin.Ping(ctx)
	}
	if err != nil {
		if admin != nil {
			admin.Close()
		}
		if e.server != nil {
			e.server.stop()
		}
		return nil, fmt.Errorf("connect to %s: %w", redact(e.baseURL), err)
	}
	e.admin = admin
	return e, nil
}

// shutdown closes the shared pool and stops the private server, if any.
func shutdown() {
	mu.Lock()
	defer mu.Unlock()
	if env == nil {
		return
	}
	env.admin.Close()
	if env.server != nil {
		env.server.stop()
	}
	env = nil
}

// redact hides the password of a URL for messages.
func redact(raw string) string {
	u, err := url.Parse(raw)
	if err != nil {
		return "the database URL"
	}
	return u.Redacted()
}
