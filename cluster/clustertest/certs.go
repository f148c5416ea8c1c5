package clustertest

import (
	"crypto/ecdsa"
	"crypto/elliptic"
	"crypto/rand"
	"crypto/tls"
	"crypto/x509"
	"crypto/x509/pkix"
	"encoding/pem"
	"fmt"
	"math/big"
	"net"
	"os"
	"path/filepath"
	"testing"
	"time"
)

// Certs is a throw-away PKI made at run time for TLS tests: a CA, a server
// certificate for 127.0.0.1 and localhost signed by it, and a client
// certificate (for mutual TLS) signed by it. Nothing is checked in.
type Certs struct {
	Dir string // where the PEM files are

	CAFile         string // the CA certificate (PEM)
	ServerCertFile string // the server certificate (PEM), for 127.0.0.1 and localhost
	ServerKeyFile  string // its private key (PEM)
	ClientCertFile string // the client certificate (PEM)
	ClientKeyFile  string // its private key (PEM)

	CAPool     *x509.CertPool  // holds the CA certificate
	ClientCert tls.Certificate // the client certificate with its key
}

// NewCerts generates a fresh CA, server and client certificate in a
// temporary directory of the test. Two calls give two unrelated CAs.
func NewCerts(t testing.TB) *Certs {
	t.Helper()
	c, err := GenerateCerts(t.TempDir())
	if err != nil {
		t.Fatalf("clustertest: %v", err)
	}
	return c
}

// GenerateCerts writes a fresh CA, server and client certificate (ECDSA
// P-256, valid for one day) into dir.
func GenerateCerts(dir string) (*Certs, error) {
	now := time.Now()
	caKey, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return nil, err
	}
	caTmpl := &x509.Certificate{
		SerialNumber:          serial(),
		Subject:               pkix.Name{CommonName: "quorumlock test CA"},
		NotBefore:             now.Add(-time.Hour),
		NotAfter:              now.Add(24 * time.Hour),
		IsCA:                  true,
		BasicConstraintsValid: true,
		KeyUsage:              x509.KeyUsageCertSign | x509.KeyUsageDigitalSignature,
	}
	caDER, err := x509.CreateCertificate(rand.Reader, caTmpl, caTmpl, &caKey.PublicKey, caKey)
	if err != nil {
		return nil, fmt.Errorf("CA certificate: %w", err)
	}
	ca, err := x509.ParseCertificate(caDER)
	if err != nil {
		return nil, err
	}
	c := &Certs{
		Dir:            dir,
		CAFile:         filepath.Join(dir, "ca.pem"),
		ServerCertFile: filepath.Join(dir, "server.pem"),
		ServerKeyFile:  filepath.Join(dir, "server-key.pem"),
		ClientCertFile: filepath.Join(dir, "client.pem"),
		ClientKeyFile:  filepath.Join(dir, "client-key.pem"),
		CAPool:         x509.NewCertPool(),
	}
	c.CAPool.AddCert(ca)
	if err := writePEM(c.CAFile, "CERTIFICATE", caDER); err != nil {
		return nil, err
	}
	server := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "localhost"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageServerAuth},
		DNSNames:     []string{"localhost"},
		IPAddresses:  []net.IP{net.IPv4(127, 0, 0, 1)},
	}
	if _, err := issue(server, ca, caKey, c.ServerCertFile, c.ServerKeyFile); err != nil {
		return nil, fmt.Errorf("server certificate: %w", err)
	}
	client := &x509.Certificate{
		SerialNumber: serial(),
		Subject:      pkix.Name{CommonName: "quorumlock test client"},
		NotBefore:    now.Add(-time.Hour),
		NotAfter:     now.Add(24 * time.Hour),
		KeyUsage:     x509.KeyUsageDigitalSignature,
		ExtKeyUsage:  []x509.ExtKeyUsage{x509.ExtKeyUsageClientAuth},
	}
	if c.ClientCert, err = issue(client, ca, caKey, c.ClientCertFile, c.ClientKeyFile); err != nil {
		return nil, fmt.Errorf("client certificate: %w", err)
	}
	return c, nil
}

// ClientTLS returns a client configuration that trusts the CA and presents
// the client certificate, for server name 127.0.0.1.
func (c *Certs) ClientTLS() *tls.Config {
	return &tls.Config{
		RootCAs:      c.CAPool,
		Certificates: []tls.Certificate{c.ClientCert},
		ServerName:   "127.0.0.1",
		MinVersion:   tls.VersionTLS12,
	}
}

func serial() *big.Int {
	n, _ := rand.Int(rand.Reader, new(big.Int).Lsh(big.NewInt(1), 62))
	return n
}

// issue signs tmpl with the CA and writes the certificate and a new key.
func issue(tmpl, ca *x509.Certificate, caKey *ecdsa.PrivateKey, certFile, keyFile string) (tls.Certificate, error) {
	key, err := ecdsa.GenerateKey(elliptic.P256(), rand.Reader)
	if err != nil {
		return tls.Certificate{}, err
	}
	der, err := x509.CreateCertificate(rand.Reader, tmpl, ca, &key.PublicKey, caKey)
	if err != nil {
		return tls.Certificate{}, err
	}
	keyDER, err := x509.MarshalPKCS8PrivateKey(key)
	if err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(certFile, "CERTIFICATE", der); err != nil {
		return tls.Certificate{}, err
	}
	if err := writePEM(keyFile, "PRIVATE KEY", keyDER); err != nil {
		return tls.Certificate{}, err
	}
	return tls.LoadX509KeyPair(certFile, keyFile)
}

func writePEM(path, typ string, der []byte) error {
	return os.WriteFile(path, pem.EncodeToMemory(&pem.Block{Type: typ, Bytes: der}), 0o600)
}
