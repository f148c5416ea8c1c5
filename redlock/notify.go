package redlock

import (
	"context"
	"strings"
	"sync"

	"github.com/quorumlock/quorumlock/internal/keys"

	"github.com/redis/go-redis/v9"
)

// notifier wakes Lock waiters when a holder releases. A release publishes on
// keys.ChannelPrefix+key on each master; the Client keeps one subscription per
// master, shared by all its waiters, subscribed to the channels of the keys
// somebody waits for. A missed message costs only latency: waiters also back
// off and retry.
type notifier struct {
	c *Client

	mu      sync.Mutex
	keys    map[string]*keyWaiters
	subs    []*subscription // one per master, made on first use
	started bool
	closed  bool
}

type keyWaiters struct {
	n    int           // waiters of this key
	wake chan struct{} // closed (and replaced) on every release
}

// subscription is one master's pub/sub connection. Changes to its channel set
// go through ops, so that a stalled master never blocks a waiter.
type subscription struct {
	ps  *redis.PubSub
	ops chan subOp
}

type subOp struct {
	subscribe bool
	channel   string
}

func newNotifier(c *Client) *notifier {
	return &notifier{c: c, keys: make(map[string]*keyWaiters)}
}

// watch registers a waiter for key; the returned func unregisters it. Call
// wake() before each attempt and wait on the channel it returns.
func (n *notifier) watch(key string) (wake func() <-chan struct{}, stop func()) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if !n.c.cfg.notifications || n.closed {
		never := make(chan struct{})
		return func() <-chan struct{} { return never }, func() {}
	}
	kw := n.keys[key]
	if kw == nil {
		kw = &keyWaiters{wake: make(chan struct{})}
		n.keys[key] = kw
		n.startLocked()
		n.sendLocked(subOp{subscribe: true, channel: keys.ChannelPrefix + key})
	}
	kw.n++
	wake = func() <-chan struct{} {
		n.mu.Lock()
		defer n.mu.Unlock()
		return kw.wake
	}
	stop = func() {
		n.mu.Lock()
		defer n.mu.Unlock()
		kw.n--
		if kw.n == 0 && n.keys[key] == kw {
			delete(n.keys, key)
			n.sendLocked(subOp{channel: keys.ChannelPrefix + key})
		}
	}
	return wake, stop
}

// startLocked opens the subscriptions on first use.
func (n *notifier) startLocked() {
	if n.started {
		return
	}
	n.started = true
	for _, m := range n.c.masters {
		s := &subscription{ps: m.rdb.Subscribe(context.Background()), ops: make(chan subOp, 1024)}
		n.subs = append(n.subs, s)
		n.c.spawn(func() { n.apply(s) })
		n.c.spawn(func() { n.receive(s) })
	}
}

// sendLocked queues a channel change on every master; when a queue is full
// (its master is stalled) the change is dropped: that master's messages are
// lost, which backoff covers.
func (n *notifier) sendLocked(op subOp) {
	for _, s := range n.subs {
		select {
		case s.ops <- op:
		default:
		}
	}
}

// apply performs channel changes on one master's subscription.
func (n *notifier) apply(s *subscription) {
	for {
		select {
		case <-n.c.closing():
			return
		case op := <-s.ops:
			ctx, cancel := context.WithTimeout(context.Background(), n.c.masterTimeout(0))
			if op.subscribe {
				_ = s.ps.Subscribe(ctx, op.channel)
			} else {
				_ = s.ps.Unsubscribe(ctx, op.channel)
			}
			cancel()
		}
	}
}

// receive wakes the waiters of each released key.
func (n *notifier) receive(s *subscription) {
	ch := s.ps.Channel()
	for {
		select {
		case <-n.c.closing():
			return
		case msg, ok := <-ch:
			if !ok {
				return
			}
			n.wake(strings.TrimPrefix(msg.Channel, keys.ChannelPrefix))
		}
	}
}

func (n *notifier) wake(key string) {
	n.mu.Lock()
	defer n.mu.Unlock()
	if kw := n.keys[key]; kw != nil {
		close(kw.wake)
		kw.wake = make(chan struct{})
	}
}

// close ends the subscriptions.
func (n *notifier) close() {
	n.mu.Lock()
	defer n.mu.Unlock()
	n.closed = true
	for _, s := range n.subs {
		_ = s.ps.Close()
	}
}
