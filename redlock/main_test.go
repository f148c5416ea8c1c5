package redlock

import (
	"testing"

	"go.uber.org/goleak"
)

// Every goroutine a Client or a lease starts ends by Close (lease watchers
// with their lease): goleak checks it after the package's tests.
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
