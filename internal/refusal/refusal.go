// Package refusal tells the Redis error replies that waiting does not
// change: package redlock and its semaphores stop retrying when so many
// masters give one that no majority is possible (redlock.ErrMisconfigured).
package refusal

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// forGood are the beginnings of the error replies that waiting does not
// change: the masters' configuration, or a foreign value at one of the
// library's keys, refuses its commands until an operator acts.
var forGood = []string{
	"NOPERM",              // the ACL lacks a command, key pattern or channel
	"NOAUTH", "WRONGPASS", // credentials
	"WRONGTYPE",           // another type at a key of the library
	"ERR unknown command", // a command renamed or disabled
	// The ACL lacks a command or channel a script calls: Redis 7.0 words
	// NOPERM so inside EVAL ("... can't run this command or subcommand",
	// "... can't publish to the channel ...").
	"ERR The user executing the script can't",
}

// ForGood reports whether err is, or wraps, a Redis error reply that
// waiting does not change (NOPERM, NOAUTH, WRONGPASS, WRONGTYPE, an unknown
// command, a script's ACL denial). The first Redis error reply in err's
// tree decides.
func ForGood(err error) bool {
	var re redis.Error
	if !errors.As(err, &re) {
		return false
	}
	for _, p := range forGood {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}
