package cli

import (
	"strings"
	"testing"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// redlockctl on three rediss:// masters that require client certificates:
// with --tls-ca, --tls-cert and --tls-key it locks and unlocks; without the
// client certificate, or with another CA, no master is reachable and it says
// why (TLS), never falling back to plain TCP; a certificate without its key
// is a usage error.
func TestTLSFlags(t *testing.T) {
	certs, other := clustertest.NewCerts(t), clustertest.NewCerts(t)
	c := clustertest.StartWith(t, 3, clustertest.AOFAlways, clustertest.WithTLS(certs, true))
	tlsArgs := []string{"--tls-ca", certs.CAFile, "--tls-cert", certs.ClientCertFile, "--tls-key", certs.ClientKeyFile}

	r := ctl(t, c, append([]string{"lock", "tls:k", "--ttl", "5s"}, tlsArgs...)...)
	r.want(t, ExitOK, "lock over mutual TLS")
	ctl(t, c, append([]string{"unlock", strings.TrimSpace(r.out)}, tlsArgs...)...).want(t, ExitOK, "unlock over mutual TLS")

	r = ctl(t, c, "status", "--tls-ca", certs.CAFile)
	if r.code == ExitOK || !strings.Contains(r.out+r.errOut, "TLS") {
		t.Fatalf("status without the client certificate: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	r = ctl(t, c, "status", "--tls-ca", other.CAFile, "--tls-cert", certs.ClientCertFile, "--tls-key", certs.ClientKeyFile)
	if r.code == ExitOK || !strings.Contains(r.out+r.errOut, "unknown authority") {
		t.Fatalf("status with another CA: exit %d\n%s%s", r.code, r.out, r.errOut)
	}
	ctl(t, c, "status", "--tls-cert", certs.ClientCertFile).want(t, ExitUsage, "--tls-cert without --tls-key")
}
