package redlock

import "time"

// clockDriftFloor is the fixed part of the drift allowance (antirez's 2 ms).
const clockDriftFloor = 2 * time.Millisecond

// validity is how long a lease of ttl may claim mutual exclusion, counted
// from before the first command of the round that set or renewed its keys:
// ttl − (ttl·driftFactor + 2 ms). Every deadline of a lease comes from here.
func (c *Client) validity(ttl time.Duration) time.Duration {
	return ttl - time.Duration(float64(ttl)*c.cfg.driftFactor) - clockDriftFloor
}

// deadline is the end of the validity of keys set or renewed for ttl by a
// round that began at start.
func (c *Client) deadline(start time.Time, ttl time.Duration) time.Time {
	return start.Add(c.validity(ttl))
}
