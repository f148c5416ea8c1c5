package inspect_test

import (
	"fmt"

	"github.com/quorumlock/quorumlock/cmd/redlockctl/internal/inspect"
)

// The owner id names a lock value without revealing it.
func ExampleOwnerID() {
	fmt.Println(inspect.OwnerID("0123456789abcdef0123456789abcdef"))
	// Output: 3eb1bd439947
}
