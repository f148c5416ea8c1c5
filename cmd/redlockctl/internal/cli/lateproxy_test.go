package cli

import (
	"bytes"
	"net"
	"sync"
	"sync/atomic"
	"testing"
	"time"
)

// startLateProxy forwards connections on a loopback port to target and
// returns its address. Every byte goes through at once, except the answer
// to a request that carries mark (a script's SHA): that answer is held back
// for delay, so the master has run the command while the client, past its
// timeout, hears nothing. Connection handshakes (HELLO, CLIENT SETINFO) and
// every other command are answered on time, which a proxy delaying every
// reply (netproxy.SetReplyDelay) cannot do: a client that dials for the
// command would time out in its handshake and never send the script.
func startLateProxy(t *testing.T, target string, mark string, delay time.Duration) string {
	t.Helper()
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		t.Fatal(err)
	}
	var wg sync.WaitGroup
	var mu sync.Mutex
	var conns []net.Conn
	t.Cleanup(func() {
		_ = ln.Close()
		mu.Lock()
		for _, c := range conns {
			_ = c.Close()
		}
		mu.Unlock()
		wg.Wait()
	})
	wg.Go(func() {
		for {
			in, err := ln.Accept()
			if err != nil {
				return
			}
			out, err := net.Dial("tcp", target)
			if err != nil {
				_ = in.Close()
				continue
			}
			mu.Lock()
			conns = append(conns, in, out)
			mu.Unlock()
			var late atomic.Int32 // answers still to hold back
			// client → master, at once
			wg.Go(func() {
				defer out.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := in.Read(buf)
					if n > 0 {
						if bytes.Contains(buf[:n], []byte(mark)) {
							late.Add(1) // before the master can answer
						}
						if _, err := out.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
			// master → client, the marked answers late
			wg.Go(func() {
				defer in.Close()
				buf := make([]byte, 64<<10)
				for {
					n, err := out.Read(buf)
					if n > 0 {
						if late.Load() > 0 {
							late.Add(-1)
							time.Sleep(delay)
						}
						if _, err := in.Write(buf[:n]); err != nil {
							return
						}
					}
					if err != nil {
						return
					}
				}
			})
		}
	})
	return ln.Addr().String()
}
