package demo

import (
	"context"
	"errors"
	"sync"
	"time"

	"github.com/alicebob/miniredis/v2"
	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/netproxy"
)

// masters is five in-process Redis masters, each behind a pausable proxy.
// miniredis moves TTLs only when told; a ticker tells it as time passes, so
// that keys expire as on a real server.
type masters struct {
	servers []*miniredis.Miniredis
	proxies []*netproxy.Proxy
	stop    chan struct{}
	ticker  sync.WaitGroup
}

// tick advances every server's clock with real time until close.
func (ms *masters) tick() {
	last := time.Now()
	t := time.NewTicker(10 * time.Millisecond)
	defer t.Stop()
	for {
		select {
		case <-ms.stop:
			return
		case now := <-t.C:
			for _, s := range ms.servers {
				s.FastForward(now.Sub(last))
			}
			last = now
		}
	}
}

func startMasters(n int) (*masters, error) {
	ms := &masters{stop: make(chan struct{})}
	for range n {
		s := miniredis.NewMiniRedis()
		if err := s.Start(); err != nil {
			ms.close()
			return nil, err
		}
		ms.servers = append(ms.servers, s)
		addr := s.Addr()
		p, err := netproxy.Start(func() string { return addr })
		if err != nil {
			ms.close()
			return nil, err
		}
		ms.proxies = append(ms.proxies, p)
	}
	ms.ticker.Go(ms.tick)
	return ms, nil
}

// clients dials each master through its proxy with fail-fast settings.
func (ms *masters) clients() []redis.UniversalClient {
	out := make([]redis.UniversalClient, len(ms.proxies))
	for i, p := range ms.proxies {
		out[i] = redis.NewClient(&redis.Options{
			Addr: p.Addr(), ContextTimeoutEnabled: true, MaxRetries: -1,
			DialTimeout: time.Second, ReadTimeout: time.Second, WriteTimeout: time.Second,
		})
	}
	return out
}

// keysLeft counts the masters that still hold key.
func (ms *masters) keysLeft(key string) int {
	n := 0
	for _, s := range ms.servers {
		if s.Exists(key) {
			n++
		}
	}
	return n
}

// disconnect closes every proxy (each waits for its pipes: nothing more
// reaches a master through it) and waits, within ctx, until every master has
// no client left: each has then run every command it received. It reports
// whether they all got there.
func (ms *masters) disconnect(ctx context.Context) bool {
	for _, p := range ms.proxies {
		_ = p.Close()
	}
	return waitUntil(ctx, func() bool {
		for _, s := range ms.servers {
			if s.CurrentConnectionCount() > 0 {
				return false
			}
		}
		return true
	})
}

// advance moves every master's clock forward by d, expiring what d expires.
func (ms *masters) advance(d time.Duration) {
	for _, s := range ms.servers {
		s.FastForward(d)
	}
}

func (ms *masters) close() {
	select {
	case <-ms.stop:
	default:
		close(ms.stop)
	}
	ms.ticker.Wait()
	for _, p := range ms.proxies {
		_ = p.Close()
	}
	for _, s := range ms.servers {
		s.Close()
	}
}

func closeClients(cs []redis.UniversalClient) error {
	var errs []error
	for _, c := range cs {
		errs = append(errs, c.Close())
	}
	return errors.Join(errs...)
}

// waitUntil polls cond every 10 ms until it holds or ctx ends.
func waitUntil(ctx context.Context, cond func() bool) bool {
	for !cond() {
		select {
		case <-ctx.Done():
			return false
		case <-time.After(10 * time.Millisecond):
		}
	}
	return true
}
