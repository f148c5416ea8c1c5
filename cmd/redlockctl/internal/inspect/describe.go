package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/quorum"
	"github.com/quorumlock/quorumlock/redlock"
)

// Describe says in a few words why a master failed: unreachable (refused,
// timeout, auth, TLS, DNS), held by another owner, quarantined.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var me *redlock.MasterError
	if errors.As(err, &me) {
		msg = me.Err.Error() // without the "master N (addr):" prefix
	}
	switch {
	case errors.Is(err, redlock.ErrHeldByOther):
		return "held by another owner"
	case errors.Is(err, redlock.ErrKeyAbsent):
		return "the key is gone there (expired, or lost with the master's data)"
	case errors.Is(err, redlock.ErrNotProbed):
		return "unreachable: no probe has answered yet (" + msg + ")"
	case errors.Is(err, redlock.ErrReplica):
		return "answers as a replica, not a master: " + msg
	case errors.Is(err, redlock.ErrQuarantined):
		return "answering but quarantined: " + msg
	case errors.Is(err, redlock.ErrMasterBusy):
		return "stalled: " + msg
	case errors.Is(err, redlock.ErrNotWaitedFor):
		return "not waited for: " + msg
	case errors.Is(err, redlock.ErrReplyError):
		return "answered with an error: " + msg
	}
	var reply redis.Error
	if errors.As(err, &reply) && !isAuth(msg) && !errors.Is(err, redis.ErrClosed) {
		return "answered with an error: " + msg
	}
	return "unreachable: " + cause(err, msg)
}

// cause names why a master could not be reached.
func cause(err error, msg string) string {
	var dnsErr *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, syscall.ECONNREFUSED), strings.Contains(msg, "connection refused"):
		return "connection refused"
	case errors.Is(err, redlock.ErrMasterTimeout), errors.Is(err, context.DeadlineExceeded), isTimeout(err),
		strings.Contains(msg, "timeout"), strings.Contains(msg, "deadline exceeded"):
		return "timeout (no answer in time: paused, overloaded or partitioned?)"
	case errors.As(err, &dnsErr):
		return "DNS: " + dnsErr.Err
	case errors.As(err, &tlsErr), errors.As(err, &certErr), strings.Contains(msg, "tls:"):
		return "TLS: " + msg
	case isAuth(msg):
		return "auth: " + msg
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed), strings.Contains(msg, "connection reset"):
		return "connection reset"
	}
	return msg
}

func isAuth(msg string) bool {
	for _, s := range []string{"WRONGPASS", "NOAUTH", "NOPERM", "invalid password", "invalid username-password"} {
		if strings.Contains(msg, s) {
			return true
		}
	}
	return false
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}

// Summary is a redlock error's first line, without the per-master list
// (MasterErrors gives it one line per master).
func Summary(err error) string {
	var e *redlock.Error
	if !errors.As(err, &e) || err.Error() != e.Error() {
		return err.Error() // not a bare redlock error: keep its context
	}
	s := fmt.Sprintf("%s %q: %v (%s)", e.Op, e.Key, e.Kind,
		quorum.Tally{Granted: e.Granted, Counted: e.Counted, Needed: e.Quorum, Answered: e.Answered, Masters: e.Of})
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// MasterErrors lists a redlock error's per-master causes, one line each.
func MasterErrors(err error) []string {
	var e *redlock.Error
	if !errors.As(err, &e) {
		return nil
	}
	var out []string
	for _, me := range e.Masters {
		var m *redlock.MasterError
		if errors.As(me, &m) {
			out = append(out, fmt.Sprintf("master %d (%s): %s", m.Master, m.Addr, Describe(m.Err)))
		} else {
			out = append(out, me.Error())
		}
	}
	return out
}
