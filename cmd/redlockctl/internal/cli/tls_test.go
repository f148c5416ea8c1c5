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

// Masters given with cluster.Dial's own URL parameters (tls_ca, tls_cert,
// tls_key): every command that prints or takes a handle works (lock,
// extend, unlock; sem acquire, refresh, release), and the handle names each
// master as host:port/db, the way Dial identifies it. (lock held the key
// and then exited 2, "redis: unexpected option: tls_ca", printing no
// handle.)
func TestHandleCommandsWithTLSURLParameters(t *testing.T) {
	certs := clustertest.NewCerts(t)
	c := clustertest.StartWith(t, 3, clustertest.AOFAlways, clustertest.WithTLS(certs, true))
	var urls, ids []string
	for _, s := range c.Servers {
		urls = append(urls, s.URL()+"/?tls_ca="+certs.CAFile+"&tls_cert="+certs.ClientCertFile+"&tls_key="+certs.ClientKeyFile)
		ids = append(ids, s.Addr+"/0")
	}
	env := map[string]string{EnvMasters: strings.Join(urls, ",")}

	r := invoke(t, env, "", "lock", "tls:k", "--ttl", "5s")
	r.want(t, ExitOK, "lock with tls_ca= in the URLs")
	h, err := ParseHandle(r.out)
	if err != nil || strings.Join(h.Masters, ",") != strings.Join(ids, ",") {
		t.Fatalf("lock printed %q: %+v, %v; want masters %v", r.out, h, err, ids)
	}
	r = invoke(t, env, "", "extend", strings.TrimSpace(r.out), "--ttl", "10s")
	r.want(t, ExitOK, "extend with tls_ca= in the URLs")
	invoke(t, env, "", "unlock", strings.TrimSpace(r.out)).want(t, ExitOK, "unlock with tls_ca= in the URLs")

	r = invoke(t, env, "", "sem", "acquire", "tls:q", "--limit", "2", "--ttl", "5s")
	r.want(t, ExitOK, "sem acquire with tls_ca= in the URLs")
	r = invoke(t, env, "", "sem", "refresh", "tls:q", strings.TrimSpace(r.out), "--limit", "2", "--ttl", "10s")
	r.want(t, ExitOK, "sem refresh with tls_ca= in the URLs")
	invoke(t, env, "", "sem", "release", "tls:q", strings.TrimSpace(r.out), "--limit", "2").want(t, ExitOK, "sem release with tls_ca= in the URLs")
	if v := get(t, c, "tls:k"); v[0]+v[1]+v[2] != "" {
		t.Fatalf("keys left: %q", v)
	}
}
