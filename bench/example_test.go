package bench_test

import (
	"fmt"

	"github.com/quorumlock/quorumlock/bench"
)

// Markdown renders rows (as Run returns them) as the tables of
// docs/performance.md.
func ExampleMarkdown() {
	rows := []bench.Row{{
		Scenario: "uncontended-1", Library: bench.Quorumlock, GoRedis: "defaults", Goroutines: 1, Clients: 1,
		Ops: 1630, OpsPerSec: 815, AcqP50US: 734, AcqP99US: 3900, AcqMaxUS: 11000,
		CPUClientUS: 1090, CPUServersUS: 816,
	}}
	fmt.Print(bench.Markdown(rows))
	// Output:
	// | scenario | library | go-redis | lock+unlock/s | acquire p50 | p99 | max | CPU µs/op client + servers | failed |
	// |---|---|---|---:|---:|---:|---:|---:|---|
	// | uncontended-1 | quorumlock | defaults | 815 | 734 µs | 3.9 ms | 11 ms | 1090 + 816 | 0 |
}
