// Package pgtest gives tests a real PostgreSQL database.
//
// If QUORUMLOCK_TEST_POSTGRES_URL is set, tests use that server. Otherwise
// the first test that asks starts a private server for the whole test binary:
// initdb and postgres from /usr/lib/postgresql/*/bin (Debian's postgresql
// package; the newest version wins) or from PATH, in a temporary directory,
// listening on a free 127.0.0.1 port with its Unix socket in that directory,
// with fsync off. PostgreSQL refuses to run as root, so under root both run as
// the "postgres" user through runuser. The server's output goes to
// postgres.log in the directory; its tail is shown when start-up fails.
//
// Either way every test gets its own empty schema (first on its search_path)
// that is dropped when the test ends, so tests do not see each other's tables.
//
// A package that uses pgtest must run its tests through Main, which stops the
// private server by PID (SIGINT, a fast shutdown, then SIGKILL) after the last
// test:
//
//	func TestMain(m *testing.M) { pgtest.Main(m) }
//
// If PostgreSQL is not installed and no URL is set, the tests that need it
// fail, naming the package to install: they never pass by skipping.
package pgtest
