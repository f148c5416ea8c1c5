package inspect

import (
	"context"
	"crypto/tls"
	"errors"
	"fmt"
	"net"
	"strings"
	"syscall"

	"github.com/quorumlock/quorumlock/redlock"
)

// Describe says in a few words why a master failed: unreachable (refused,
// timeout, auth, TLS, DNS), held by another owner, quarantined.
func Describe(err error) string {
	if err == nil {
		return ""
	}
	msg := err.Error()
	var dnsErr *net.DNSError
	var tlsErr *tls.RecordHeaderError
	var certErr *tls.CertificateVerificationError
	switch {
	case errors.Is(err, redlock.ErrHeldByOther):
		return "held by another owner"
	case errors.Is(err, redlock.ErrQuarantined) && strings.Contains(msg, "not probed"):
		// The client's restart probe failed: down, paused or cut off.
		return "unreachable: its restart probe failed (down, paused or partitioned?)"
	case errors.Is(err, redlock.ErrQuarantined):
		return "answering but quarantined: " + msg
	case errors.Is(err, syscall.ECONNREFUSED):
		return "unreachable: connection refused"
	case errors.Is(err, redlock.ErrMasterTimeout), errors.Is(err, context.DeadlineExceeded), isTimeout(err):
		return "unreachable: timeout (no answer in time; paused, overloaded or partitioned?)"
	case errors.As(err, &dnsErr):
		return "unreachable: DNS: " + dnsErr.Err
	case errors.As(err, &tlsErr), errors.As(err, &certErr), strings.Contains(msg, "tls:"):
		return "unreachable: TLS: " + msg
	case strings.Contains(msg, "WRONGPASS"), strings.Contains(msg, "NOAUTH"), strings.Contains(msg, "NOPERM"),
		strings.Contains(msg, "invalid password"), strings.Contains(msg, "invalid username-password"):
		return "unreachable: auth: " + msg
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, net.ErrClosed):
		return "unreachable: connection reset"
	}
	return "error: " + msg
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
	s := fmt.Sprintf("%s %q: %v (%d of %d needed)", e.Op, e.Key, e.Kind, e.Granted, e.Quorum)
	if e.Cause != nil {
		s += ": " + e.Cause.Error()
	}
	return s
}

// MasterErrors lists a redlock error's per-master causes, one line each.
func MasterErrors(err error) []string {
	var e *redlock.Error
	if !errors.As(err, &e) || e.Masters == nil {
		return nil
	}
	var out []string
	for _, me := range e.Masters.Errors {
		var m *redlock.MasterError
		if errors.As(me, &m) {
			out = append(out, fmt.Sprintf("master %d (%s): %s", m.Master, m.Addr, Describe(m.Err)))
		} else {
			out = append(out, me.Error())
		}
	}
	return out
}
