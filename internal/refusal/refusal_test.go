package refusal

import (
	"context"
	"errors"
	"fmt"
	"testing"

	"github.com/redis/go-redis/v9"
)

// replyError is a Redis error reply as go-redis returns one.
type replyError string

func (e replyError) Error() string { return string(e) }
func (replyError) RedisError()     {}

var _ redis.Error = replyError("")

func TestForGood(t *testing.T) {
	for _, tc := range []struct {
		err  error
		want bool
	}{
		{replyError("NOPERM this user has no permissions to run the 'zadd' command"), true},
		{replyError("NOAUTH Authentication required."), true},
		{replyError("WRONGPASS invalid username-password pair or user is disabled."), true},
		{replyError("WRONGTYPE Operation against a key holding the wrong kind of value"), true},
		{replyError("ERR unknown command 'evalsha', with args beginning with: "), true},
		{replyError("ERR The user executing the script can't run this command or subcommand script: 1, on @user_script:1."), true},
		{fmt.Errorf("master 0: %w", replyError("WRONGTYPE Operation against a key")), true},
		{replyError("OOM command not allowed when used memory > 'maxmemory'."), false},
		{replyError("BUSY Redis is busy running a script."), false},
		{replyError("LOADING Redis is loading the dataset in memory"), false},
		{replyError("READONLY You can't write against a read only replica."), false},
		{replyError("EXECABORT Transaction discarded because of previous errors."), false},
		{errors.New("NOPERM in a message, not a reply"), false},
		{context.DeadlineExceeded, false},
		{nil, false},
	} {
		if got := ForGood(tc.err); got != tc.want {
			t.Errorf("ForGood(%v) = %v, want %v", tc.err, got, tc.want)
		}
	}
}
