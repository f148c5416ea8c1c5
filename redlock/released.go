package redlock

import (
	"sync"
	"time"
)

// maxReleased bounds the released values a Client remembers.
const maxReleased = 4096

// releasedValues remembers, per key, the value of the last lease this
// Client released or lost, until that lease's TTL would have ended: a
// release returns once a majority deleted the key, and the delete to the
// other masters may still be on its way when the next attempt of the same
// Client arrives there. Round 1 sends the value along, and a master where
// the key still holds it counts the key as free (acquire.lua): the lease is
// over, and it was ours. Another client's value is never overwritten.
type releasedValues struct {
	mu   sync.Mutex
	vals map[string]released
}

type released struct {
	value string
	until time.Time
}

func newReleasedValues() *releasedValues {
	return &releasedValues{vals: make(map[string]released)}
}

// note records that the lease of key with value ended; its keys expire by
// until at the latest.
func (r *releasedValues) note(key, value string, until time.Time) {
	r.mu.Lock()
	defer r.mu.Unlock()
	makeRoom(r.vals, key, maxReleased)
	r.vals[key] = released{value, until}
}

// value is the released value of key still worth sending at now, "" if none.
func (r *releasedValues) value(key string, now time.Time) string {
	r.mu.Lock()
	defer r.mu.Unlock()
	v, ok := r.vals[key]
	if !ok {
		return ""
	}
	if !now.Before(v.until) {
		delete(r.vals, key)
		return ""
	}
	return v.value
}
