package fencing

import (
	"fmt"
	"strconv"
)

// Token is a fencing token. Tokens of successive holders of one lock key only
// grow. The zero Token means "no token" and is never handed out by a lock.
type Token uint64

// MaxToken is the largest token the Redis-side protocol can represent exactly:
// Redis Lua numbers are IEEE doubles, so counters stay below 2^53.
const MaxToken Token = 1<<53 - 1

// IsZero reports whether t is the zero ("no token") value.
func (t Token) IsZero() bool { return t == 0 }

// String formats t in decimal.
func (t Token) String() string { return strconv.FormatUint(uint64(t), 10) }

// ParseToken parses a decimal token as produced by Token.String. It returns an
// error wrapping ErrInvalidToken for anything that is not a decimal integer in
// [1, MaxToken].
func ParseToken(s string) (Token, error) {
	v, err := strconv.ParseUint(s, 10, 64)
	if err != nil {
		return 0, fmt.Errorf("%w: %q is not a decimal integer", ErrInvalidToken, s)
	}
	t := Token(v)
	if t == 0 || t > MaxToken {
		return 0, fmt.Errorf("%w: %d is outside [1, %d]", ErrInvalidToken, v, MaxToken)
	}
	return t, nil
}
