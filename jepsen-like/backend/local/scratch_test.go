package local

import (
	"context"
	"net"
	"testing"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/redlock"
)

func TestScratch(t *testing.T) {
	ctx := context.Background()
	shim, err := nemesis.BuildClockShim(t.TempDir())
	if err != nil {
		t.Fatal(err)
	}
	b, err := Start(ctx, Options{ClockShim: shim})
	if err != nil {
		t.Fatal(err)
	}
	defer b.Close()
	ln, _ := net.Listen("tcp", "127.0.0.1:0")
	defer ln.Close()
	go func() {
		for {
			c, err := ln.Accept()
			if err != nil {
				return
			}
			_ = c
		}
	}()
	mk := func(addrs []string) []redis.UniversalClient {
		var out []redis.UniversalClient
		for _, a := range addrs {
			out = append(out, redis.NewClient(&redis.Options{Addr: a, ContextTimeoutEnabled: true, MaxRetries: -1}))
		}
		return out
	}
	ms := b.Masters()
	all := []string{ms[0].Addr(), ms[1].Addr(), ms[2].Addr(), ms[3].Addr(), ms[4].Addr()}
	conf := []string{ms[0].Addr(), ms[1].Addr(), ln.Addr().String(), ms[3].Addr(), ln.Addr().String()}
	for _, fencing := range []bool{true, false} {
		a, _ := redlock.New(mk(conf), redlock.WithoutQuarantine(), redlock.WithFencing(fencing))
		la, err := a.Lock(ctx, "k", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = ms[3].SetClockOffset(ctx, 2*time.Second)
		time.Sleep(50 * time.Millisecond)
		bc, _ := redlock.New(mk(all), redlock.WithoutQuarantine(), redlock.WithFencing(fencing))
		_, err = bc.TryLock(ctx, "k", time.Second)
		t.Logf("fencing %v: B's TryLock: %v", fencing, err)
		_ = ms[3].SetClockOffset(ctx, 0)
		_ = la
		time.Sleep(1100 * time.Millisecond)
	}
}
