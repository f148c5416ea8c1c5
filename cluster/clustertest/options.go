package clustertest

import (
	"crypto/tls"
	"testing"
)

// ServerOption configures StartServer, LaunchServer and StartWith.
type ServerOption func(*serverOptions)

type serverOptions struct {
	certs       *Certs
	authClients bool
	args        []string
}

// WithTLS makes the server listen with TLS only (no plain port), with the
// server certificate of certs; with authClients it also requires a client
// certificate signed by certs' CA (--tls-auth-clients yes). URL then
// returns a rediss:// URL, and Client talks TLS with certs.ClientTLS().
func WithTLS(certs *Certs, authClients bool) ServerOption {
	return func(o *serverOptions) { o.certs, o.authClients = certs, authClients }
}

// WithArgs passes extra command-line arguments to redis-server, e.g.
// "--enable-debug-command", "yes" or "--busy-reply-threshold", "50". They
// come last, so they override clustertest's own.
func WithArgs(args ...string) ServerOption {
	return func(o *serverOptions) { o.args = append(o.args, args...) }
}

// StartWith is Start with server options: n independent masters with
// persistence p, stopped when the test ends.
func StartWith(t testing.TB, n int, p Persistence, opts ...ServerOption) *Cluster {
	t.Helper()
	c := &Cluster{}
	for range n {
		c.Servers = append(c.Servers, StartServer(t, p, opts...))
	}
	return c
}

// TLSConfig returns the client TLS configuration for a server started
// WithTLS (trusting its CA, presenting the client certificate), or nil.
func (s *Server) TLSConfig() *tls.Config {
	if s.opts.certs == nil {
		return nil
	}
	return s.opts.certs.ClientTLS()
}

func (o serverOptions) listenArgs(port string) []string {
	if o.certs == nil {
		return []string{"--port", port}
	}
	auth := "no"
	if o.authClients {
		auth = "yes"
	}
	return []string{
		"--port", "0", "--tls-port", port,
		"--tls-cert-file", o.certs.ServerCertFile, "--tls-key-file", o.certs.ServerKeyFile,
		"--tls-ca-cert-file", o.certs.CAFile, "--tls-auth-clients", auth,
	}
}
