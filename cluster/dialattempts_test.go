package cluster

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
	"github.com/quorumlock/quorumlock/redlock"
)

// closingListener accepts TCP connections on 127.0.0.1 and closes each at
// once, counting them: a TLS handshake against it fails at the dial.
func closingListener(t *testing.T) (addr string, accepted *atomic.Int64) {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	accepted = new(atomic.Int64)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			accepted.Add(1)
			_ = c.Close()
		}
	}()
	t.Cleanup(func() { _ = ln.Close(); <-done })
	return ln.Addr().String(), accepted
}

// One failed dial is one connection attempt: go-redis's own DialerRetries
// (5 attempts with backoff by default) is off, so a refused or TLS-failing
// master costs one attempt and the caller sees its cause.
func TestDialMakesOneAttemptPerCall(t *testing.T) {
	addr, accepted := closingListener(t)
	c, err := Dial(context.Background(), []string{"rediss://" + addr})
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	for i := 1; i <= 3; i++ {
		if err := c.Clients()[0].Ping(context.Background()).Err(); err == nil {
			t.Fatal("PING through a listener that closes every connection succeeded")
		}
		if n := accepted.Load(); n != int64(i) {
			t.Fatalf("after %d PINGs the master saw %d connection attempts; want one per call", i, n)
		}
	}
}

// A wrong CA is reported as a TLS failure even when the caller allows
// little time (a short lock TTL gives each master a short timeout): with
// go-redis's retries the backoff outlasted the deadline and the error read
// "timeout".
func TestWrongCAIsNamedUnderAShortDeadline(t *testing.T) {
	certs, other := clustertest.NewCerts(t), clustertest.NewCerts(t)
	s := clustertest.StartServer(t, clustertest.NoPersistence, clustertest.WithTLS(certs, false))
	c, err := Dial(context.Background(), []string{s.URL()}, WithCA(other.CAFile))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	// 300 ms: more than one local handshake takes (a few ms), less than the
	// 400 ms of backoff between go-redis's five default attempts.
	ctx, cancel := context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	err = c.Clients()[0].Ping(ctx).Err()
	if err == nil || !strings.Contains(err.Error(), "certificate signed by unknown authority") || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("PING with a wrong CA under a 300 ms deadline: %v; want the x509 error, not a timeout", err)
	}
	ctx, cancel = context.WithTimeout(context.Background(), 300*time.Millisecond)
	defer cancel()
	st := c.Check(ctx)[0]
	if st.Reachable || !errors.Is(st.Err, redlock.ErrUnreachable) || !strings.Contains(st.Err.Error(), "(TLS)") {
		t.Fatalf("Check with a wrong CA under a 300 ms deadline: %+v; want unreachable (TLS)", st)
	}
}

// WithPing reports one line per failed master, without go-multierror's
// header and blank lines.
func TestWithPingErrorIsOneLinePerMaster(t *testing.T) {
	rc := clustertest.Start(t, 3)
	urls := rc.URLs()
	for _, s := range []*clustertest.Server{rc.Servers[0], rc.Servers[2]} {
		if err := s.Kill(); err != nil {
			t.Fatal(err)
		}
	}
	_, err := Dial(context.Background(), urls, WithPing())
	if err == nil {
		t.Fatal("Dial with two dead masters succeeded")
	}
	lines := strings.Split(err.Error(), "\n")
	if len(lines) != 2 || !strings.HasPrefix(lines[0], "master 0 (") || !strings.HasPrefix(lines[1], "master 2 (") {
		t.Fatalf("WithPing error:\n%q\nwant two lines, master 0 and master 2", err.Error())
	}
	for _, l := range lines {
		if !strings.Contains(l, "connection refused") {
			t.Errorf("line %q does not name the cause", l)
		}
	}
	if !errors.Is(err, redlock.ErrUnreachable) {
		t.Errorf("WithPing error does not match redlock.ErrUnreachable: %v", err)
	}
}
