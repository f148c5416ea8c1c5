package redlock

import (
	"errors"
	"strings"

	"github.com/redis/go-redis/v9"
)

// refusedForGoodReplies are the error replies that waiting does not change:
// the masters' configuration, or a foreign value at one of the lock's keys,
// refuses the library's commands until an operator acts.
var refusedForGoodReplies = []string{
	"NOPERM",              // the ACL lacks a command, key pattern or channel
	"NOAUTH", "WRONGPASS", // credentials
	"WRONGTYPE",           // another type at the lock's key or its counter
	"ERR unknown command", // a command renamed or disabled
}

// refusedForGood reports whether one master's part of a failed operation is
// a refusal that waiting does not change: one of refusedForGoodReplies, or
// the same server given twice (ErrDuplicate).
func refusedForGood(err error) bool {
	if errors.Is(err, ErrDuplicate) {
		return true
	}
	var re redis.Error
	if !errors.Is(err, ErrReplyError) || !errors.As(err, &re) {
		return false
	}
	for _, p := range refusedForGoodReplies {
		if strings.HasPrefix(re.Error(), p) {
			return true
		}
	}
	return false
}

// misconfigured reports whether so many masters refused for good that no
// majority is possible until an operator acts: Lock then stops waiting, and
// the error matches ErrMisconfigured.
func (e *Error) misconfigured() bool {
	if e.Of == 0 || e.Quorum == 0 {
		return false
	}
	refused := 0
	for _, err := range e.Masters {
		var me *MasterError
		if errors.As(err, &me) && refusedForGood(me) {
			refused++
		}
	}
	return e.Of-refused < e.Quorum
}
