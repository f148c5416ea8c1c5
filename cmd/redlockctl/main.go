// Command redlockctl is quorumlock's operator CLI. Run `redlockctl demo` for
// a demonstration on five embedded masters that needs nothing installed, or
// `redlockctl status` to check the masters in REDLOCK_MASTERS.
package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/quorumlock/quorumlock/internal/cli"
)

func main() {
	ctx, stop := signal.NotifyContext(context.Background(), os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(ctx, os.Args[1:], os.Stdout, os.Stderr)
	stop()
	os.Exit(code)
}
