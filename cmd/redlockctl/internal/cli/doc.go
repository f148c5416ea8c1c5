// Package cli holds redlockctl's commands on cobra, one file per command
// (status.go, lock.go, extend.go, unlock.go, run.go, audit.go, doctor.go,
// sem.go, demo.go, bench.go, version.go), and what they share: global flags
// and the master list (globals.go), exit codes (exit.go), output (output.go),
// lease handles and the owner-checked extend and release behind them
// (handle.go, leaseops.go), and the go-redis log adapter (logger.go).
// cmd/redlockctl/main.go only calls Execute with the process's stdio,
// environment and signals; tests call it in process with their own.
package cli
