package cli

import (
	"encoding/base64"
	"encoding/json"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/cluster"
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

// masterIDs names each master of c as host:port/db, without credentials,
// from the options cluster.Dial built: the URLs are parsed once, by Dial
// (its own parameters such as tls_ca, its password scrubbing), never a
// second way here.
func masterIDs(c *cluster.Cluster) []string {
	clients, urls := c.Clients(), c.URLs()
	out := make([]string, len(clients))
	for i, rc := range clients {
		if rc, ok := rc.(interface{ Options() *redis.Options }); ok { // Dial builds *redis.Client
			o := rc.Options()
			out[i] = fmt.Sprintf("%s/%d", o.Addr, o.DB)
		} else {
			out[i] = urls[i] // password already hidden
		}
	}
	return out
}

// sameMasters checks that the handle was issued for the configured masters.
func (h Handle) sameMasters(ids []string) error {
	if strings.Join(h.Masters, ",") != strings.Join(ids, ",") {
		return fmt.Errorf("the handle was issued for masters %s, not %s: give the same --masters (in the same order)",
			strings.Join(h.Masters, ","), strings.Join(ids, ","))
	}
	return nil
}
