package netproxy

import (
	"context"
	"errors"
	"net"
	"strings"
	"sync/atomic"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"
	"go.uber.org/goleak"

	"github.com/quorumlock/quorumlock/cluster/clustertest"
)

func TestMain(m *testing.M) { goleak.VerifyTestMain(m) }

func start(t *testing.T) (*Proxy, *clustertest.Server, *redis.Client) {
	t.Helper()
	s := clustertest.StartServer(t, clustertest.NoPersistence)
	p, err := Start(func() string { return s.Addr })
	if err != nil {
		t.Fatal(err)
	}
	t.Cleanup(func() { _ = p.Close() })
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
		DialTimeout: time.Second, ReadTimeout: time.Second})
	t.Cleanup(func() { _ = c.Close() })
	return p, s, c
}

func TestForwardsAndBlocks(t *testing.T) {
	ctx := context.Background()
	p, _, c := start(t)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatal(err)
	}
	p.SetBlocked(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.Get(short, "k").Err()
	cancel()
	var ne net.Error
	if !errors.Is(err, context.DeadlineExceeded) && !(errors.As(err, &ne) && ne.Timeout()) {
		t.Fatalf("GET through a blocked link: %v, want a hang until the deadline", err)
	}
	p.SetBlocked(false)
	if got, err := c.Get(ctx, "k").Result(); err != nil || got != "v" {
		t.Fatalf("after healing GET = %q, %v", got, err)
	}
}

func TestRefusedFailsFast(t *testing.T) {
	ctx := context.Background()
	p, s, c := start(t)
	p.SetRefused(true)
	cctx, cancel := context.WithTimeout(ctx, 5*time.Second)
	defer cancel()
	err := c.Set(cctx, "k", "v", 0).Err()
	if err == nil || errors.Is(err, context.DeadlineExceeded) {
		t.Fatalf("SET through a refused link: %v, want a connection error", err)
	}
	direct := s.Client(t)
	if n, _ := direct.Exists(ctx, "k").Result(); n != 0 {
		t.Fatal("a command sent through a refused link reached the server")
	}
	p.SetRefused(false)
	if err := c.Set(ctx, "k", "v", 0).Err(); err != nil {
		t.Fatalf("after restoring: %v", err)
	}
}

// slow-replies: the command is applied at once, only its answer is late.
func TestReplyDelayAppliesOnTime(t *testing.T) {
	ctx := context.Background()
	p, s, c := start(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.SetReplyDelay(300 * time.Millisecond)
	direct := s.Client(t)
	done := make(chan error, 1)
	go func() { done <- c.Set(ctx, "k", "v", 0).Err() }()
	deadline := time.Now().Add(5 * time.Second)
	for {
		if n, _ := direct.Exists(ctx, "k").Result(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the SET never reached the server")
		}
		time.Sleep(5 * time.Millisecond)
	}
	select {
	case err := <-done:
		t.Fatalf("the reply came before the key was seen applied plus the delay: %v", err)
	default:
	}
	if err := <-done; err != nil {
		t.Fatal(err)
	}
}

// After the target moved (a failover), Reset makes clients reconnect to it.
func TestTargetMoves(t *testing.T) {
	ctx := context.Background()
	a := clustertest.StartServer(t, clustertest.NoPersistence)
	b := clustertest.StartServer(t, clustertest.NoPersistence)
	var target atomic.Value
	target.Store(a.Addr)
	p, err := Start(func() string { return target.Load().(string) })
	if err != nil {
		t.Fatal(err)
	}
	defer p.Close()
	c := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: 2})
	defer c.Close()
	if err := c.Set(ctx, "where", "a", 0).Err(); err != nil {
		t.Fatal(err)
	}
	target.Store(b.Addr)
	p.Reset()
	if err := c.Get(ctx, "where").Err(); !errors.Is(err, redis.Nil) {
		t.Fatalf("GET after the move: %v, want redis.Nil from the new target", err)
	}
}

// A paused link holds every byte, as a SIGSTOPped server does: nothing sent
// through it is applied while paused, a new connection is still accepted,
// and on resume what was held back is delivered and answered.
func TestPauseHoldsTrafficAndResumeDeliversIt(t *testing.T) {
	ctx := context.Background()
	p, s, c := start(t)
	if err := c.Set(ctx, "before", "1", 0).Err(); err != nil {
		t.Fatal(err)
	}
	direct := s.Client(t)
	p.SetPaused(true)
	short, cancel := context.WithTimeout(ctx, 200*time.Millisecond)
	err := c.Set(short, "timed-out", "1", 0).Err()
	cancel()
	if err == nil {
		t.Fatal("SET answered through a paused link")
	}
	patient := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 10 * time.Second})
	defer patient.Close()
	done := make(chan error, 1)
	go func() { done <- patient.Set(ctx, "held", "1", 0).Err() }()
	time.Sleep(200 * time.Millisecond) // give both SETs time to reach the proxy; neither may pass it
	if n, err := direct.Exists(ctx, "timed-out", "held").Result(); err != nil || n != 0 {
		t.Fatalf("while paused, %d of the SETs sent through the link reached the server (err %v)", n, err)
	}
	select {
	case err := <-done:
		t.Fatalf("SET on a connection opened while paused answered before resume: %v", err)
	default:
	}
	p.SetPaused(false)
	if err := <-done; err != nil {
		t.Fatalf("held SET after resume: %v", err)
	}
	deadline := time.Now().Add(5 * time.Second)
	for { // the timed-out client's SET was sent before it gave up: delivered on resume, like SIGCONT
		if n, _ := direct.Exists(ctx, "timed-out").Result(); n == 1 {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("the SET held back while paused was never delivered after resume")
		}
		time.Sleep(10 * time.Millisecond)
	}
	if got, err := c.Get(ctx, "before").Result(); err != nil || got != "1" {
		t.Fatalf("GET after resume: %q, %v", got, err)
	}
}

// Close releases connections held by a pause.
func TestCloseWhilePaused(t *testing.T) {
	ctx := context.Background()
	p, _, c := start(t)
	if err := c.Ping(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	p.SetPaused(true)
	done := make(chan error, 1)
	go func() { done <- c.Ping(ctx).Err() }()
	time.Sleep(50 * time.Millisecond)
	if err := p.Close(); err != nil {
		t.Fatal(err)
	}
	if err := <-done; err == nil {
		t.Fatal("PING answered through a paused, then closed, link")
	}
}

// Replies are held too: a command applied before the pause (a blocked
// BLPOP) gets its answer only after resume. The link is paused, resumed
// and paused again first: the last call decides.
func TestPauseHoldsReplies(t *testing.T) {
	ctx := context.Background()
	p, s, _ := start(t)
	patient := redis.NewClient(&redis.Options{Addr: p.Addr(), MaxRetries: -1, ReadTimeout: 20 * time.Second})
	defer patient.Close()
	direct := s.Client(t)
	done := make(chan []string, 1)
	go func() { v, _ := patient.BLPop(ctx, 15*time.Second, "q").Result(); done <- v }()
	deadline := time.Now().Add(5 * time.Second)
	for { // the BLPOP reached the server and blocks there
		info, err := direct.Info(ctx, "clients").Result()
		if err == nil && strings.Contains(info, "blocked_clients:1") {
			break
		}
		if time.Now().After(deadline) {
			t.Fatal("BLPOP never blocked on the server")
		}
		time.Sleep(10 * time.Millisecond)
	}
	p.SetPaused(true)
	p.SetPaused(false)
	p.SetPaused(true)
	if err := direct.RPush(ctx, "q", "x").Err(); err != nil {
		t.Fatal(err)
	}
	time.Sleep(200 * time.Millisecond) // the server has answered the BLPOP; the proxy must hold the reply
	select {
	case v := <-done:
		t.Fatalf("BLPOP answered through a paused link: %v", v)
	default:
	}
	p.SetPaused(false)
	if v := <-done; len(v) != 2 || v[1] != "x" {
		t.Fatalf("BLPOP after resume: %v; want [q x]", v)
	}
}
