package cluster

import (
	"context"
	"crypto/tls"
	"errors"
	"net/url"
	"os"
	"path/filepath"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// withQuery appends query parameters to a URL.
func withQuery(raw string, kv ...string) string {
	q := url.Values{}
	for i := 0; i+1 < len(kv); i += 2 {
		q.Set(kv[i], kv[i+1])
	}
	return raw + "/?" + q.Encode()
}

// dialPing dials one URL with WithPing and returns its error, closing the
// cluster on success.
func dialPing(t *testing.T, raw string, opts ...Option) error {
	t.Helper()
	c, err := Dial(context.Background(), []string{raw}, append(opts, WithPing())...)
	if err == nil {
		_ = c.Close()
	}
	return err
}

func TestTLSWithCA(t *testing.T) {
	certs := clustertest.NewCerts(t)
	s := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithTLS(certs, false))
	if !strings.HasPrefix(s.URL(), "rediss://") {
		t.Fatalf("URL %s: want rediss://", s.URL())
	}
	// The CA as an option, as a URL parameter, and as a tls.Config.
	if err := dialPing(t, s.URL(), WithCA(certs.CAFile)); err != nil {
		t.Errorf("WithCA: %v", err)
	}
	if err := dialPing(t, withQuery(s.URL(), ParamCA, certs.CAFile)); err != nil {
		t.Errorf("?%s=: %v", ParamCA, err)
	}
	if err := dialPing(t, s.URL(), WithTLS(&tls.Config{RootCAs: certs.CAPool})); err != nil {
		t.Errorf("WithTLS: %v", err)
	}
	// The server certificate names localhost too.
	local := strings.Replace(s.URL(), "127.0.0.1", "localhost", 1)
	if err := dialPing(t, local, WithCA(certs.CAFile)); err != nil {
		t.Errorf("%s: %v", local, err)
	}
	// Without the CA, the system roots do not know it.
	err := dialPing(t, s.URL())
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") {
		t.Errorf("no CA: %v; want an unknown authority error", err)
	}
}

func TestTLSWrongCAOrHostFails(t *testing.T) {
	certs, other := clustertest.NewCerts(t), clustertest.NewCerts(t)
	s := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithTLS(certs, false))

	err := dialPing(t, s.URL(), WithCA(other.CAFile))
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") || !strings.Contains(err.Error(), "master 0") {
		t.Errorf("wrong CA: %v; want master 0 and an unknown authority error", err)
	}
	err = dialPing(t, withQuery(s.URL(), ParamCA, certs.CAFile, ParamServerName, "wrong.example"))
	if err == nil || !strings.Contains(err.Error(), "not wrong.example") {
		t.Errorf("wrong host name: %v; want a host name mismatch", err)
	}

	// Check names the cause, and the master is unreachable: no fallback.
	c, err := Dial(context.Background(), []string{s.URL()}, WithCA(other.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	st := c.Check(context.Background())
	if st[0].Reachable || !errors.Is(st[0].Err, redlock.ErrUnreachable) || !strings.Contains(st[0].Err.Error(), "(TLS)") {
		t.Errorf("Check with the wrong CA: %+v; want unreachable, cause TLS", st[0])
	}
}

func TestTLSNeverFallsBackToPlain(t *testing.T) {
	certs := clustertest.NewCerts(t)
	plain := clustertest.StartServer(t, clustertest.NoPersistence)
	tlsSrv := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithTLS(certs, false))

	// rediss:// to a plain server fails the handshake.
	short := WithTimeouts(200*time.Millisecond, 200*time.Millisecond) // go-redis dials 5 times
	err := dialPing(t, "rediss://"+plain.Addr, WithCA(certs.CAFile), short)
	if err == nil || !strings.Contains(err.Error(), "does this port speak TLS?") {
		t.Fatalf("rediss:// to a plain server: %v; want a failure hinting at TLS", err)
	}
	t.Logf("rediss:// to a plain server: %v", err)
	// TLS settings on a redis:// URL are refused before any I/O.
	for name, tc := range map[string]struct {
		raw  string
		opts []Option
	}{
		"option": {"redis://" + tlsSrv.Addr, []Option{WithCA(certs.CAFile)}},
		"param":  {withQuery("redis://"+tlsSrv.Addr, ParamCA, certs.CAFile), nil},
	} {
		_, err := Dial(context.Background(), []string{tc.raw}, tc.opts...)
		if !errors.Is(err, ErrInvalidArgument) || !strings.Contains(err.Error(), "rediss://") {
			t.Errorf("%s: TLS settings on redis://: %v; want ErrInvalidArgument pointing at rediss://", name, err)
		}
	}
	// redis:// to the TLS port gets no answer it accepts.
	if err := dialPing(t, "redis://"+tlsSrv.Addr, short); err == nil {
		t.Error("plain redis:// to a TLS-only port answered")
	} else {
		t.Logf("redis:// to a TLS port: %v", err)
	}
}

func TestMutualTLS(t *testing.T) {
	certs := clustertest.NewCerts(t)
	s := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithTLS(certs, true))

	if err := dialPing(t, s.URL(), WithCA(certs.CAFile)); err == nil {
		t.Error("a client without a certificate was let in by --tls-auth-clients yes")
	}
	if err := dialPing(t, s.URL(), WithCA(certs.CAFile), WithClientCert(certs.ClientCertFile, certs.ClientKeyFile)); err != nil {
		t.Errorf("WithClientCert: %v", err)
	}
	raw := withQuery(s.URL(), ParamCA, certs.CAFile, ParamCert, certs.ClientCertFile, ParamKey, certs.ClientKeyFile)
	if err := dialPing(t, raw); err != nil {
		t.Errorf("URL parameters: %v", err)
	}
	// A client certificate from another CA is refused.
	other := clustertest.NewCerts(t)
	if err := dialPing(t, s.URL(), WithCA(certs.CAFile), WithClientCert(other.ClientCertFile, other.ClientKeyFile)); err == nil {
		t.Error("a client certificate of another CA was let in")
	}
}

// The lock itself over mutual TLS, on three TLS-only masters.
func TestRedlockOverMutualTLS(t *testing.T) {
	ctx := context.Background()
	certs := clustertest.NewCerts(t)
	rc := clustertest.StartWith(t, 3, clustertest.NoPersistence, clustertest.WithTLS(certs, true))
	c, err := Dial(ctx, rc.URLs(), WithCA(certs.CAFile), WithClientCert(certs.ClientCertFile, certs.ClientKeyFile), WithPing())
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	locks, err := redlock.New(c.Clients())
	if err != nil {
		t.Fatal(err)
	}
	defer locks.Close()
	lease, err := locks.TryLock(ctx, "tls:job", 5*time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if _, err := locks.TryLock(ctx, "tls:job", 5*time.Second); !errors.Is(err, redlock.ErrNotAcquired) {
		t.Errorf("second TryLock: %v; want ErrNotAcquired", err)
	}
	if err := lease.Release(ctx); err != nil {
		t.Fatal(err)
	}
	for _, st := range c.Check(ctx) {
		if !st.Reachable {
			t.Errorf("Check over TLS: master %d: %v", st.Master, st.Err)
		}
	}
}

func TestTLSBadSettings(t *testing.T) {
	ctx := context.Background()
	certs := clustertest.NewCerts(t)
	garbage := filepath.Join(t.TempDir(), "garbage.pem")
	if err := os.WriteFile(garbage, []byte("not a certificate"), 0o600); err != nil {
		t.Fatal(err)
	}
	u := "rediss://127.0.0.1:1"
	for name, tc := range map[string]struct {
		raw  string
		opts []Option
	}{
		"missing CA file":  {u, []Option{WithCA(filepath.Join(t.TempDir(), "none.pem"))}},
		"CA without PEM":   {u, []Option{WithCA(garbage)}},
		"empty CA name":    {u, []Option{WithCA("")}},
		"nil TLS config":   {u, []Option{WithTLS(nil)}},
		"cert without key": {withQuery(u, ParamCert, certs.ClientCertFile), nil},
		"key without cert": {withQuery(u, ParamKey, certs.ClientKeyFile), nil},
		"half client cert": {u, []Option{WithClientCert(certs.ClientCertFile, "")}},
		"bad key file":     {u, []Option{WithClientCert(certs.ClientCertFile, garbage)}},
		"unknown param":    {withQuery(u, "tls_bogus", "1"), nil},
	} {
		_, err := Dial(ctx, []string{tc.raw}, tc.opts...)
		if !errors.Is(err, ErrInvalidArgument) {
			t.Errorf("%s: %v; want ErrInvalidArgument", name, err)
		}
	}
}
