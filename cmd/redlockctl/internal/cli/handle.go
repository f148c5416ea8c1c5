package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"
)

// handlePrefix starts every lease handle (version 1).
const handlePrefix = "rlh1."

// Handle is what `lock` prints and `extend`/`unlock` take: enough to act on
// the lease from a later invocation. It holds the lock value, the lease's
// secret: whoever has the handle can extend or release the lock. It is
// printed only to stdout and must be kept like a password.
//
// Encoding: "rlh1." followed by the unpadded base64url encoding of the JSON
// object below.
type Handle struct {
	Key        string    `json:"key"`
	Value      string    `json:"value"` // the secret lock value
	Token      uint64    `json:"token"`
	ValidUntil time.Time `json:"valid_until"` // the lease's local deadline (wall clock)
	TTLms      int64     `json:"ttl_ms"`      // the TTL it was acquired or last extended with
	Masters    []string  `json:"masters"`     // host:port/db of each master, in order; no passwords
}

// Encode returns the handle's text form.
func (h Handle) Encode() string {
	b, _ := json.Marshal(h) // a struct of strings, numbers and a time: never fails
	return handlePrefix + base64.RawURLEncoding.EncodeToString(b)
}

// ParseHandle decodes a handle printed by `lock` or `extend`.
func ParseHandle(s string) (Handle, error) {
	s = strings.TrimSpace(s)
	var h Handle
	rest, ok := strings.CutPrefix(s, handlePrefix)
	if !ok {
		return h, fmt.Errorf("not a lease handle: it must start with %q (as printed by `redlockctl lock`)", handlePrefix)
	}
	b, err := base64.RawURLEncoding.DecodeString(rest)
	if err != nil {
		return h, fmt.Errorf("lease handle is damaged: %v", err)
	}
	if err := json.Unmarshal(b, &h); err != nil {
		return h, fmt.Errorf("lease handle is damaged: %v", err)
	}
	switch {
	case h.Key == "" || h.Value == "":
		return h, errors.New("lease handle has no key or value")
	case len(h.Masters) == 0:
		return h, errors.New("lease handle names no masters")
	case h.TTLms <= 0:
		return h, errors.New("lease handle has no TTL")
	}
	return h, nil
}

// masterIDs names each master URL as host:port/db, without credentials.
func masterIDs(urls []string) ([]string, error) {
	out := make([]string, len(urls))
	for i, u := range urls {
		o, err := redis.ParseURL(u)
		if err != nil {
			return nil, fmt.Errorf("master %d: %w", i, err)
		}
		out[i] = fmt.Sprintf("%s/%d", o.Addr, o.DB)
	}
	return out, nil
}

// sameMasters checks that the handle was issued for the configured masters.
func (h Handle) sameMasters(ids []string) error {
	if strings.Join(h.Masters, ",") != strings.Join(ids, ",") {
		return fmt.Errorf("the handle was issued for masters %s, not %s: give the same --masters (in the same order)",
			strings.Join(h.Masters, ","), strings.Join(ids, ","))
	}
	return nil
}
