package probe

import (
	"context"
	"crypto/tls"
	"crypto/x509"
	"errors"
	"net"
	"os"
	"strings"
	"syscall"

	"github.com/redis/go-redis/v9"
)

// Cause names, for people, why a master could not be reached: "connection
// refused", "timeout", "auth", "TLS", "DNS", "connection reset", "closed", or
// "error" when it cannot tell.
func Cause(err error) string {
	var dnsErr *net.DNSError
	var certErr *tls.CertificateVerificationError
	var recErr tls.RecordHeaderError
	var unknownCA x509.UnknownAuthorityError
	var hostErr x509.HostnameError
	msg := ""
	if err != nil {
		msg = strings.ToUpper(err.Error())
	}
	switch {
	case err == nil:
		return "none"
	case errors.Is(err, syscall.ECONNREFUSED):
		return "connection refused"
	case errors.As(err, &dnsErr):
		return "DNS"
	case errors.As(err, &certErr), errors.As(err, &recErr), errors.As(err, &unknownCA), errors.As(err, &hostErr),
		strings.Contains(msg, "TLS"), strings.Contains(msg, "X509"):
		return "TLS"
	case strings.HasPrefix(msg, "NOAUTH"), strings.HasPrefix(msg, "WRONGPASS"), strings.Contains(msg, "AUTH"):
		return "auth"
	case errors.Is(err, context.DeadlineExceeded), errors.Is(err, os.ErrDeadlineExceeded), isTimeout(err):
		return "timeout"
	case errors.Is(err, syscall.ECONNRESET), errors.Is(err, syscall.EPIPE):
		return "connection reset"
	case errors.Is(err, net.ErrClosed):
		return "closed"
	}
	return "error"
}

// isReply reports whether err is the server's own error reply.
func isReply(err error) bool {
	var re redis.Error
	return errors.As(err, &re)
}

func isTimeout(err error) bool {
	var ne net.Error
	return errors.As(err, &ne) && ne.Timeout()
}
