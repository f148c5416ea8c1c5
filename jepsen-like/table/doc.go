// Package table runs the rows of the table in docs/jepsen-like.md ("What it
// must show"): each fault once with plain Redlock (--no-quarantine
// --no-fencing) and once with the defaults and a fenced store, with a
// committed seed, and renders the verdicts as markdown. The command
// `jepsen-like table --out docs/jepsen-like.md` rewrites the table between
// its markers; the package's test runs the same rows and asserts them.
package table
