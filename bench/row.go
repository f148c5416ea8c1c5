package bench

// Row is the result of one library in one scenario; the command writes one
// JSON line per Row. Latencies are in µs, CPU in µs per operation (an
// operation is one lock+unlock pair; in hot-key scenarios one acquisition).
type Row struct {
	Scenario   string  `json:"scenario"`
	Library    string  `json:"library"`
	Goroutines int     `json:"goroutines"`
	Clients    int     `json:"clients"` // lockers ("processes"), each over its own go-redis clients
	Stalled    int     `json:"stalled_masters"`
	GoRedis    string  `json:"go_redis"` // "defaults" or "ContextTimeoutEnabled"
	WindowS    float64 `json:"window_s"`
	// Rep is the repetition (1, 2, ...) when Config.Repeat > 1; Repeats, on
	// a Summary row, how many repetitions its medians are taken over.
	Rep     int   `json:"rep,omitempty"`
	Repeats int   `json:"repeats,omitempty"`
	TTLMs   int64 `json:"ttl_ms"`

	Ops       int     `json:"ops"`
	OpsPerSec float64 `json:"ops_per_s"`
	// Acquire latency (hot key: the wait from calling Lock to holding).
	AcqP50US float64 `json:"acquire_p50_us"`
	AcqP99US float64 `json:"acquire_p99_us"`
	AcqMaxUS float64 `json:"acquire_max_us"`
	// Lock+unlock latency of uncontended scenarios.
	PairP50US float64 `json:"pair_p50_us,omitempty"`

	// Failed counts attempts that did not acquire (uncontended), Lock calls
	// that gave up before the window ended (hot key), and failed releases.
	Failed     int    `json:"failed"`
	FirstError string `json:"first_error,omitempty"`
	// InFlight operations had started but not finished when the window
	// closed; they are not counted.
	InFlight int `json:"in_flight"`

	CPUClientUS  float64 `json:"cpu_client_us_per_op"`
	CPUServersUS float64 `json:"cpu_servers_us_per_op"`

	// Hot key only.
	OwnerChanges       int     `json:"owner_changes,omitempty"`
	OwnerChangesPerSec float64 `json:"owner_changes_per_s,omitempty"`
	// ShareMaxMin is the most acquisitions of one goroutine over the fewest
	// (0 when some goroutine had none: see Starved).
	ShareMaxMin float64 `json:"share_max_min,omitempty"`
	ShareMin    int     `json:"share_min,omitempty"`
	ShareMax    int     `json:"share_max,omitempty"`
	Starved     int     `json:"starved,omitempty"`
	// ClientShareMin and ClientShareMax are the fewest and the most
	// acquisitions of one client (process), when there are several.
	ClientShareMin int `json:"client_share_min,omitempty"`
	ClientShareMax int `json:"client_share_max,omitempty"`
	// Overlaps counts acquisitions that found another holder inside the
	// critical section: a mutual exclusion failure (expected 0).
	Overlaps int `json:"overlaps"`

	// Skipped says why the library did not run this scenario.
	Skipped string `json:"skipped,omitempty"`
}
