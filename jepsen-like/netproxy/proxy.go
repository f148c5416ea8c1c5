package netproxy

import (
	"errors"
	"fmt"
	"io"
	"net"
	"sync"
	"time"
)

// Proxy forwards connections on a loopback port to a target address.
// The zero value is not usable; call Start.
type Proxy struct {
	ln     net.Listener
	target func() string

	done chan struct{} // closed by Close: releases paused pipes

	mu      sync.Mutex
	blocked bool
	refused bool
	delay   time.Duration
	resumed chan struct{} // non-nil while paused; closed on resume
	closed  bool
	conns   map[net.Conn]struct{}
	wg      sync.WaitGroup
}

// Start listens on a free port of 127.0.0.1 and forwards every accepted
// connection to target(), which is asked again for each new connection.
func Start(target func() string) (*Proxy, error) {
	if target == nil {
		return nil, errors.New("netproxy: nil target")
	}
	ln, err := net.Listen("tcp", "127.0.0.1:0")
	if err != nil {
		return nil, fmt.Errorf("netproxy: %w", err)
	}
	p := &Proxy{ln: ln, target: target, done: make(chan struct{}), conns: make(map[net.Conn]struct{})}
	p.wg.Add(1)
	go p.accept()
	return p, nil
}

// Addr is the address clients dial.
func (p *Proxy) Addr() string { return p.ln.Addr().String() }

// SetBlocked cuts (true) or restores (false) the link. Cutting drops every
// open connection; while cut, new connections are accepted and their bytes
// swallowed, so a client hangs until its own timeout. Restoring drops the
// swallowing connections, so clients reconnect to the target.
func (p *Proxy) SetBlocked(b bool) {
	p.mu.Lock()
	changed := p.blocked != b
	p.blocked = b
	p.mu.Unlock()
	if changed {
		p.Reset()
	}
}

// SetRefused refuses (true) or restores (false) the link: refusing drops
// every open connection and closes new ones at once, so a client fails fast
// and nothing it sends is applied later.
func (p *Proxy) SetRefused(r bool) {
	p.mu.Lock()
	changed := p.refused != r
	p.refused = r
	p.mu.Unlock()
	if changed {
		p.Reset()
	}
}

// SetReplyDelay delays every byte from the target to the client by d (0: no
// delay). Commands still reach the target at once.
func (p *Proxy) SetReplyDelay(d time.Duration) {
	p.mu.Lock()
	p.delay = d
	p.mu.Unlock()
}

// SetPaused holds (true) or lets flow again (false) every byte in both
// directions, as a SIGSTOPped server behaves: while paused, connections are
// still accepted and what clients send is read, but nothing is forwarded;
// on resume everything held back is delivered, in order. Unlike SetBlocked,
// no connection is dropped.
func (p *Proxy) SetPaused(paused bool) {
	p.mu.Lock()
	defer p.mu.Unlock()
	switch {
	case paused && p.resumed == nil:
		p.resumed = make(chan struct{})
	case !paused && p.resumed != nil:
		close(p.resumed)
		p.resumed = nil
	}
}

// waitRunning blocks while the proxy is paused; false once it is closed.
// It looks again after every resume: a pause that follows at once holds
// the bytes too.
func (p *Proxy) waitRunning() bool {
	for {
		p.mu.Lock()
		resumed, closed := p.resumed, p.closed
		p.mu.Unlock()
		switch {
		case closed:
			return false
		case resumed == nil:
			return true
		}
		select {
		case <-resumed:
		case <-p.done:
			return false
		}
	}
}

// Reset drops every open connection (e.g. after the target moved).
func (p *Proxy) Reset() {
	p.mu.Lock()
	defer p.mu.Unlock()
	for c := range p.conns {
		_ = c.Close()
		delete(p.conns, c)
	}
}

// Close stops listening, drops every connection and waits for its goroutines.
func (p *Proxy) Close() error {
	p.mu.Lock()
	if !p.closed {
		p.closed = true
		close(p.done)
	}
	p.mu.Unlock()
	p.Reset()
	err := p.ln.Close()
	p.wg.Wait()
	return err
}

func (p *Proxy) state() (blocked, refused bool, delay time.Duration) {
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.blocked, p.refused, p.delay
}

func (p *Proxy) accept() {
	defer p.wg.Done()
	for {
		in, err := p.ln.Accept()
		if err != nil {
			return
		}
		blocked, refused, _ := p.state()
		if refused {
			_ = in.Close()
			continue
		}
		if blocked {
			if !p.track(in) {
				return
			}
			p.wg.Add(1)
			go func() { defer p.wg.Done(); _, _ = io.Copy(io.Discard, in); _ = in.Close() }()
			continue
		}
		out, err := net.DialTimeout("tcp", p.target(), time.Second)
		if err != nil {
			_ = in.Close()
			continue
		}
		if !p.track(in, out) {
			return
		}
		p.wg.Add(2)
		go p.up(out, in)
		go p.down(in, out)
	}
}

func (p *Proxy) track(conns ...net.Conn) bool {
	p.mu.Lock()
	defer p.mu.Unlock()
	if p.closed {
		for _, c := range conns {
			_ = c.Close()
		}
		return false
	}
	for _, c := range conns {
		p.conns[c] = struct{}{}
	}
	return true
}

// up copies client → target as it comes, unless paused.
func (p *Proxy) up(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			if !p.waitRunning() {
				return
			}
			if _, werr := dst.Write(buf[:n]); werr != nil {
				return
			}
		}
		if err != nil { // io.EOF or a closed connection: the peer is gone
			return
		}
	}
}

type chunk struct {
	due time.Time
	b   []byte
}

// down copies target → client, each chunk no earlier than the reply delay
// after it arrived, in order.
func (p *Proxy) down(dst, src net.Conn) {
	defer p.wg.Done()
	defer dst.Close()
	defer src.Close()
	queue := make(chan chunk, 1024)
	done := make(chan struct{})
	go func() {
		defer close(done)
		for c := range queue {
			if d := time.Until(c.due); d > 0 {
				time.Sleep(d)
			}
			if !p.waitRunning() {
				_ = src.Close()
				for range queue { //nolint:revive // drain until the reader stops
				}
				return
			}
			if _, err := dst.Write(c.b); err != nil {
				_ = src.Close()
				for range queue { //nolint:revive // drain until the reader stops
				}
				return
			}
		}
	}()
	buf := make([]byte, 32<<10)
	for {
		n, err := src.Read(buf)
		if n > 0 {
			_, _, delay := p.state()
			queue <- chunk{due: time.Now().Add(delay), b: append([]byte(nil), buf[:n]...)}
		}
		if err != nil {
			break
		}
	}
	close(queue)
	<-done
}
