package retry

import (
	"time"

	"github.com/cenkalti/backoff/v4"
)

// Default is jittered exponential backoff from 10 ms, doubling, up to
// 500 ms between attempts (randomization factor 0.5), with no time limit:
// the caller's context ends the wait.
func Default() backoff.BackOff {
	b := backoff.NewExponentialBackOff()
	b.InitialInterval = 10 * time.Millisecond
	b.RandomizationFactor = 0.5
	b.Multiplier = 2
	b.MaxInterval = 500 * time.Millisecond
	b.MaxElapsedTime = 0
	b.Reset()
	return b
}
