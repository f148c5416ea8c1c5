package checker_test

import (
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// Two processes hold "k" at once: the mutex checker says invalid and names
// the events that prove it.
func Example() {
	h := `{"index":0,"process":0,"type":"invoke","f":"acquire","key":"k","time_ns":0}
{"index":1,"process":0,"type":"ok","f":"acquire","key":"k","token":1,"time_ns":10,"valid_until_ns":1000}
{"index":2,"process":1,"type":"invoke","f":"acquire","key":"k","time_ns":20}
{"index":3,"process":1,"type":"ok","f":"acquire","key":"k","token":2,"time_ns":30,"valid_until_ns":1030}
`
	events, err := history.Decode(strings.NewReader(h))
	if err != nil {
		fmt.Println(err)
		return
	}
	results := checker.Run(events)
	fmt.Println(checker.Summary(results))
	for _, e := range results[0].Ops {
		fmt.Println(e.Index, e.Process, e.Type)
	}
	fmt.Println("exit code", checker.ExitCode(checker.Overall(results)))
	// Output:
	// mutex invalid, tokens valid
	// 1 0 ok
	// 3 1 ok
	// exit code 1
}
