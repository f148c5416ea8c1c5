package bench

import (
	"slices"
	"time"
)

// quantile is the nearest-rank q-quantile of sorted (0 for none).
func quantile(sorted []time.Duration, q float64) time.Duration {
	if len(sorted) == 0 {
		return 0
	}
	i := int(q*float64(len(sorted))+0.999999) - 1
	return sorted[min(max(i, 0), len(sorted)-1)]
}

func micros(d time.Duration) float64 { return float64(d.Nanoseconds()) / 1e3 }

// latencies sorts ds and returns p50, p99 and max in µs.
func latencies(ds []time.Duration) (p50, p99, mx float64) {
	slices.Sort(ds)
	if len(ds) == 0 {
		return 0, 0, 0
	}
	return micros(quantile(ds, 0.5)), micros(quantile(ds, 0.99)), micros(ds[len(ds)-1])
}
