package cli

import (
	"encoding/json"
	"maps"
	"slices"
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// keysOf returns the sorted keys of a JSON object.
func keysOf(t *testing.T, v any) []string {
	t.Helper()
	m, ok := v.(map[string]any)
	if !ok {
		t.Fatalf("not a JSON object: %v", v)
	}
	return slices.Sorted(maps.Keys(m))
}

func sameKeys(t *testing.T, what string, v any, want string) {
	t.Helper()
	if got := strings.Join(keysOf(t, v), " "); got != want {
		t.Errorf("%s: fields %q, documented %q (docs/cli.md)", what, got, want)
	}
}

func decode(t *testing.T, r result) map[string]any {
	t.Helper()
	var v map[string]any
	if err := json.Unmarshal([]byte(r.out), &v); err != nil {
		t.Fatalf("not JSON: %v\n%s", err, r.out)
	}
	return v
}

// The field names below are the ones docs/cli.md documents: changing one is
// a breaking change for users' scripts.
func TestJSONSchemasAreStable(t *testing.T) {
	c := clustertest.Start(t, 3, clustertest.AOFAlways)

	st := decode(t, ctl(t, c, "status", "-o", "json"))
	sameKeys(t, "status", st, "counters margin masters quorum verdict voting")
	sameKeys(t, "status counters", st["counters"], "buckets legacy present_max")
	sameKeys(t, "status master", st["masters"].([]any)[0],
		"aof appendfsync clock_offset_ms delex fresh latency_ms master quarantined reachable uptime_s url version votes")

	r := ctl(t, c, "lock", "k", "--ttl", "10s", "-o", "json")
	r.want(t, ExitOK, "lock")
	lk := decode(t, r)
	sameKeys(t, "lock", lk, "handle key owner token ttl_ms valid_until")
	ex := decode(t, ctl(t, c, "extend", lk["handle"].(string), "--ttl", "10s", "-o", "json"))
	sameKeys(t, "extend", ex, "handle key owner token ttl_ms valid_until")

	ks := decode(t, ctl(t, c, "status", "k", "-o", "json"))
	sameKeys(t, "status KEY", ks, "keys")
	key := ks["keys"].([]any)[0]
	sameKeys(t, "status KEY key", key, "answered fence holders key masters owner quorum verdict")
	sameKeys(t, "status KEY master", key.(map[string]any)["masters"].([]any)[0], "fence latency_ms master owner pttl_ms reachable url")

	un := decode(t, ctl(t, c, "unlock", ex["handle"].(string), "-o", "json"))
	sameKeys(t, "unlock", un, "key masters owner quorum released")
	sameKeys(t, "unlock master", un["masters"].([]any)[0], "master result")

	co := decode(t, ctl(t, c, "counters", "-o", "json"))
	sameKeys(t, "counters", co, "buckets folded masters")
	sameKeys(t, "counters master", co["masters"].([]any)[0], "buckets legacy master moved present reachable url")

	if err := c.Clients(t)[0].Set(t.Context(), "lock:x", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	au := decode(t, ctl(t, c, "audit", "-o", "json"))
	sameKeys(t, "audit", au, "errors findings fixed masters warnings")
	sameKeys(t, "audit master", au["masters"].([]any)[0], "master reachable scanned url")
	sameKeys(t, "audit finding", au["findings"].([]any)[0], "fence fix key kind master message owner pttl_ms severity")

	dr := decode(t, ctl(t, c, "doctor", "-o", "json"))
	sameKeys(t, "doctor", dr, "errors masters warnings")
	sameKeys(t, "doctor master", dr["masters"].([]any)[0], "findings master reachable url")
	sameKeys(t, "doctor finding", dr["masters"].([]any)[0].(map[string]any)["findings"].([]any)[0], "check message severity")

	bn := decode(t, ctl(t, c, "bench", "--duration", "300ms", "--concurrency", "2", "-o", "json"))
	sameKeys(t, "bench", bn, "concurrency duration_s errors max_ms p50_ms p99_ms pairs pairs_per_second")
	if bn["pairs"].(float64) < 1 {
		t.Errorf("bench made no pair: %v", bn)
	}
	for i, rc := range c.Clients(t) {
		if left, _ := rc.Keys(t.Context(), "*redlockctl-bench*").Result(); len(left) > 0 {
			t.Errorf("master %d: bench left %v", i, left)
		}
	}

	sameKeys(t, "version", decode(t, invoke(t, nil, "", "version", "-o", "json")), "go_version revision version")
}
