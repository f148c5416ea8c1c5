// Package pgstore is a fencing.Store kept in a PostgreSQL table.
//
// Each resource is one row of the table (DefaultTable, "quorumlock_fenced",
// unless WithTable says otherwise), which New creates if it is missing:
//
//	CREATE TABLE IF NOT EXISTS quorumlock_fenced (
//		resource text PRIMARY KEY,
//		highest  bigint NOT NULL, -- the highest accepted token
//		holder   text NOT NULL,   -- the holder that presented it
//		value    bytea            -- NULL until the first write
//	)
//
// Write and Read are each one INSERT ... ON CONFLICT DO UPDATE statement whose
// WHERE clause is the accept rule, so the check and the effect are atomic:
// PostgreSQL locks the conflicting row and, under READ COMMITTED (the
// default), evaluates the WHERE clause on its latest version. No row back
// means the token was stale. Under REPEATABLE READ or SERIALIZABLE a call
// racing with another on the same row may fail with a serialization error
// (SQLSTATE 40001) instead; it had no effect and can be retried. See
// docs/fencing-stores.md for the exact statements.
//
// Resource and holder names are stored as text, so they must be valid UTF-8
// without NUL bytes.
package pgstore
