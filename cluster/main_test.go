package cluster

import (
	"testing"

	"go.uber.org/goleak"
)

// Dial, Check and Close leave no goroutine behind (go-redis pools included).
func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }
