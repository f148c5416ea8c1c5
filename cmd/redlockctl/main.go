package main

import (
	"context"
	"os"
	"os/signal"
	"syscall"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/cli"
)

func main() {
	sigs := make(chan os.Signal, 4)
	signal.Notify(sigs, os.Interrupt, syscall.SIGTERM)
	code := cli.Execute(context.Background(), os.Args[1:], cli.Env{
		Stdin: os.Stdin, Stdout: os.Stdout, Stderr: os.Stderr, Getenv: os.Getenv, Signals: sigs,
	})
	signal.Stop(sigs)
	os.Exit(code)
}
