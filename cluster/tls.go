package cluster

import (
	"crypto/tls"
	"crypto/x509"
	"fmt"
	"os"
)

// TLS. A rediss:// URL talks TLS and nothing else: a handshake that fails
// (unknown CA, wrong host name, no client certificate) fails the connection;
// there is no fallback to plain TCP. The server name checked is the URL's
// host unless tls_server_name or the WithTLS configuration says otherwise.

// WithTLS sets the TLS configuration rediss:// masters start from (it is
// cloned per master; its ServerName, when empty, becomes the URL's host).
// Default: TLS 1.2 or later, the system's root CAs, no client certificate.
// WithCA, WithClientCert and the URL parameters tls_ca, tls_cert, tls_key
// and tls_server_name add to it. A nil config is ErrInvalidArgument.
func WithTLS(cfg *tls.Config) Option {
	return func(c *config) error {
		if cfg == nil {
			return fmt.Errorf("%w: nil TLS config", ErrInvalidArgument)
		}
		c.tls = cfg.Clone()
		return nil
	}
}

// WithCA makes rediss:// masters trust only the CA certificates in pemFile
// (instead of the system's roots). The file is read by Dial; an unreadable
// file or one without a PEM certificate is ErrInvalidArgument. The URL
// parameter tls_ca overrides it for one master.
func WithCA(pemFile string) Option {
	return func(c *config) error {
		if pemFile == "" {
			return fmt.Errorf("%w: empty CA file name", ErrInvalidArgument)
		}
		c.caFile = pemFile
		return nil
	}
}

// WithClientCert makes rediss:// masters present the client certificate in
// certFile with the private key in keyFile (PEM), for servers started with
// --tls-auth-clients yes (mutual TLS). The files are read by Dial; errors
// are ErrInvalidArgument. The URL parameters tls_cert and tls_key override it
// for one master.
func WithClientCert(certFile, keyFile string) Option {
	return func(c *config) error {
		if certFile == "" || keyFile == "" {
			return fmt.Errorf("%w: client certificate needs both a certificate and a key file (got %q, %q)",
				ErrInvalidArgument, certFile, keyFile)
		}
		c.certFile, c.keyFile = certFile, keyFile
		return nil
	}
}

// tlsParams are the TLS settings of one master: from its URL, else from the
// options.
type tlsParams struct {
	caFile, certFile, keyFile, serverName string
	skipVerify                            bool
}

// any reports whether TLS material was asked for.
func (p tlsParams) any() bool {
	return p.caFile != "" || p.certFile != "" || p.keyFile != "" || p.serverName != ""
}

// tlsConfig builds the configuration of one rediss:// master whose URL host
// is host.
func (c *config) tlsConfig(host string, p tlsParams) (*tls.Config, error) {
	out := &tls.Config{MinVersion: tls.VersionTLS12}
	if c.tls != nil {
		out = c.tls.Clone()
		if out.MinVersion == 0 {
			out.MinVersion = tls.VersionTLS12
		}
	}
	switch {
	case p.serverName != "":
		out.ServerName = p.serverName
	case out.ServerName == "":
		out.ServerName = host
	}
	if p.skipVerify {
		out.InsecureSkipVerify = true
	}
	ca := p.caFile
	if ca == "" {
		ca = c.caFile
	}
	if ca != "" {
		pool, err := loadCA(ca)
		if err != nil {
			return nil, err
		}
		out.RootCAs = pool
	}
	certFile, keyFile := p.certFile, p.keyFile
	if certFile == "" && keyFile == "" {
		certFile, keyFile = c.certFile, c.keyFile
	}
	if (certFile == "") != (keyFile == "") {
		return nil, fmt.Errorf("%w: a client certificate needs both tls_cert and tls_key", ErrInvalidArgument)
	}
	if certFile != "" {
		cert, err := tls.LoadX509KeyPair(certFile, keyFile)
		if err != nil {
			return nil, fmt.Errorf("%w: client certificate %s with key %s: %v", ErrInvalidArgument, certFile, keyFile, err)
		}
		out.Certificates = []tls.Certificate{cert}
	}
	return out, nil
}

func loadCA(file string) (*x509.CertPool, error) {
	pem, err := os.ReadFile(file)
	if err != nil {
		return nil, fmt.Errorf("%w: CA file: %v", ErrInvalidArgument, err)
	}
	pool := x509.NewCertPool()
	if !pool.AppendCertsFromPEM(pem) {
		return nil, fmt.Errorf("%w: CA file %s holds no PEM certificate", ErrInvalidArgument, file)
	}
	return pool, nil
}
