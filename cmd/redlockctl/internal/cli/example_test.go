package cli_test

import (
	"context"
	"fmt"
	"os"
	"time"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/cli"
)

// Execute runs one invocation with injected stdio and environment and
// returns its exit code.
func ExampleExecute() {
	code := cli.Execute(context.Background(), []string{"status", "--timeout", "0"}, cli.Env{
		Stdout: os.Stdout, Stderr: os.Stdout,
		Getenv: func(string) string { return "redis://127.0.0.1:6379" },
	})
	fmt.Println("exit", code)
	// Output:
	// redlockctl: --timeout 0s: must be positive
	// Run 'redlockctl --help' for usage.
	// exit 2
}

// A handle round-trips through its text form (as `lock` prints it and
// `unlock` reads it).
func ExampleParseHandle() {
	h := cli.Handle{
		Key: "deploy:prod", Value: "0123456789abcdef0123456789abcdef", Token: 17,
		ValidUntil: time.Date(2026, 12, 3, 10, 0, 0, 0, time.UTC), TTLms: 300000,
		Masters: []string{"10.0.0.1:6379/0", "10.0.0.2:6379/0", "10.0.0.3:6379/0"},
	}
	back, err := cli.ParseHandle(h.Encode())
	fmt.Println(back.Key, back.Token, back.ValidUntil.Format(time.RFC3339), len(back.Masters), err)
	_, err = cli.ParseHandle("deploy:prod")
	fmt.Println(err)
	// Output:
	// deploy:prod 17 2026-12-03T10:00:00Z 3 <nil>
	// not a lease handle: it must start with "rlh1." (as printed by `redlockctl lock`)
}
