package history_test

import (
	"errors"
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Decode validates what it reads: a completion without an invoke is an
// error naming the event.
func ExampleDecode() {
	_, err := history.Decode(strings.NewReader(`{"index":0,"process":3,"type":"ok","f":"release","key":"k","time_ns":5}`))
	fmt.Println(errors.Is(err, history.ErrInvalid))
	fmt.Println(err)
	// Output:
	// true
	// history: invalid: event #0: ok release of process 3 without an invoke
}
