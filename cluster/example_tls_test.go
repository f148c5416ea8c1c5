package cluster_test

import (
	"context"
	"fmt"
	"net/url"
	"os"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

// A master that requires TLS with client certificates (redis-server
// --tls-port ... --tls-auth-clients yes): the CA and the client certificate
// given as URL parameters, as REDLOCK_MASTERS would carry them.
func ExampleDial_mutualTLS() {
	dir, err := os.MkdirTemp("", "quorumlock-example-")
	if err != nil {
		panic(err)
	}
	defer os.RemoveAll(dir)
	certs, err := clustertest.GenerateCerts(dir) // in production: your own PKI's files
	if err != nil {
		panic(err)
	}
	s, err := clustertest.LaunchServer(clustertest.NoPersistence, clustertest.WithTLS(certs, true))
	if err != nil {
		panic(err)
	}
	defer s.Close()

	q := url.Values{}
	q.Set(cluster.ParamCA, certs.CAFile)
	q.Set(cluster.ParamCert, certs.ClientCertFile)
	q.Set(cluster.ParamKey, certs.ClientKeyFile)
	raw := s.URL() + "/?" + q.Encode() // rediss://127.0.0.1:port/?tls_ca=...&tls_cert=...&tls_key=...

	c, err := cluster.Dial(context.Background(), []string{raw}, cluster.WithPing())
	if err != nil {
		panic(err)
	}
	defer c.Close()
	fmt.Println(c.Clients()[0].Ping(context.Background()).Val())
	// Output: PONG
}
