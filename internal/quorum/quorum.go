package quorum

import "fmt"

// MaxMasters is the largest number of masters a lock or semaphore accepts.
const MaxMasters = 9

// Size is the number of masters that must agree among m masters of which at
// most f may lose data: ⌊(m+f)/2⌋ + 1. Any two sets of that many masters
// share at least f+1 masters, so at least one of them kept what the other
// set wrote. f = 0 gives the plain majority ⌊m/2⌋ + 1.
func Size(m, f int) int { return (m+f)/2 + 1 }

// Check reports why m masters cannot tolerate f masters losing data: f is
// negative, or the quorum it needs is larger than m. It returns nil when the
// pair is usable.
func Check(m, f int) error {
	switch q := Size(m, f); {
	case f < 0:
		return fmt.Errorf("data-loss tolerance %d is negative", f)
	case q > m:
		return fmt.Errorf("data-loss tolerance %d needs a quorum of %d, more than the %d masters", f, q, m)
	}
	return nil
}

// Tolerated is how many masters may fail (be down, partitioned or refuse) with
// the quorum of m masters and data-loss tolerance f still reachable: m − q.
func Tolerated(m, f int) int { return m - Size(m, f) }
