// Package docscheck holds tests that keep the documentation true to the
// code: TestReadmeNamesEverySentinel compares the exported Err* sentinels of
// redlock and redlock/semaphore with the error lists of README.md. It has no
// code of its own.
package docscheck
