package cli

import (
	"testing"

	"go.uber.org/goleak"
)

func TestMain(m *testing.M) {
	// `lock` leaves its lease held on purpose (the handle outlives the
	// invocation): the library's watcher of that lease runs until its
	// validity ends.
	goleak.VerifyTestMain(m, goleak.IgnoreAnyFunction("github.com/quorumlock/quorumlock/redlock.(*Lease).watch"))
}
