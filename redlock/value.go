package redlock

import (
	"crypto/rand"
	"encoding/hex"
)

// newValue returns a fresh 128-bit random lock value, hex-encoded. It is the
// lease's secret: whoever knows it can release the lock, so it is never logged.
func newValue() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // crypto/rand.Read never fails on Go ≥ 1.24 (it panics instead)
	return hex.EncodeToString(b[:])
}
