package cli

import (
	"fmt"
	"os"
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	code := m.Run()
	if binDir != "" {
		_ = os.RemoveAll(binDir)
	}
	// `lock` leaves its lease held on purpose (the handle outlives the
	// invocation): the library's watcher of that lease runs until its
	// validity ends.
	if err := goleak.Find(goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/redlock.(*Lease).watch")); err != nil && code == 0 {
		fmt.Fprintln(os.Stderr, "goleak:", err)
		code = 1
	}
	os.Exit(code)
}
