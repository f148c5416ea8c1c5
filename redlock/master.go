package redlock

import (
	"context"
	"fmt"
	"sync"
	"sync/atomic"

	"github.com/redis/go-redis/v9"
)

// master is one independent Redis master as the Client sees it.
type master struct {
	index int
	addr  string
	rdb   redis.UniversalClient
	batch *batcher // pipelines concurrent script calls (batch.go)
	// deadlines says whether rdb bounds its I/O by the context's deadline
	// (ContextTimeoutEnabled); without it go-redis ignores the deadline, and
	// pipelines are sent without building one.
	deadlines bool

	// slots bounds the commands in flight to this master: a stalled master
	// (SIGSTOP, a blackhole) cannot collect an unbounded number of goroutines.
	slots chan struct{}

	// suspect is set when the master let a round time out and cleared when
	// it answers; rounds do not wait for a suspect master (see decide and
	// round.collect), and a failed round pings it (pinging: one at a time).
	suspect atomic.Bool
	pinging atomic.Bool

	mu     sync.Mutex
	health health // what this client knows of its restarts (health.go), guarded by mu

	// delex says whether the master has DELEX (Redis ≥ 8.4): delexUnknown
	// until a probe or COMMAND INFO tells; releases use the script until then.
	delex        atomic.Int32
	delexRefused atomic.Bool // it answered "unknown command": never again
	detectDELEX  sync.Once
	detect       func() // starts the detection in the background (set by the Client)
}

const (
	delexUnknown int32 = iota
	delexYes
	delexNo
)

// hasDELEX reports whether releases may use DELEX, starting the detection on
// first use.
func (m *master) hasDELEX() bool {
	switch m.delex.Load() {
	case delexYes:
		return true
	case delexUnknown:
		if m.detect != nil {
			m.detectDELEX.Do(m.detect)
		}
	}
	return false
}

// setDELEX records what a probe or COMMAND INFO found.
func (m *master) setDELEX(has bool) {
	if has && !m.delexRefused.Load() {
		m.delex.Store(delexYes)
	} else {
		m.delex.Store(delexNo)
	}
}

func newMaster(i int, rdb redis.UniversalClient, maxInFlight int) *master {
	return &master{index: i, addr: addrOf(rdb, i), rdb: rdb, deadlines: usesDeadlines(rdb), slots: make(chan struct{}, maxInFlight),
		health: health{dup: -1}}
}

// usesDeadlines reports whether rdb was built with ContextTimeoutEnabled
// (true when the kind of client is unknown).
func usesDeadlines(rdb redis.UniversalClient) bool {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().ContextTimeoutEnabled
	case *redis.ClusterClient:
		return c.Options().ContextTimeoutEnabled
	case *redis.Ring:
		return c.Options().ContextTimeoutEnabled
	}
	return true
}

// addrOf names a master for errors and logs.
func addrOf(rdb redis.UniversalClient, i int) string {
	switch c := rdb.(type) {
	case *redis.Client:
		return c.Options().Addr
	case interface{ String() string }:
		return c.String()
	default:
		return fmt.Sprintf("master-%d", i)
	}
}

// ping asks a suspect master for a PING in the background, one at a time; an
// answer clears suspect.
func (m *master) ping(c *Client) {
	if !m.pinging.CompareAndSwap(false, true) {
		return
	}
	if !c.spawn(func() {
		defer m.pinging.Store(false)
		ctx, cancel := context.WithTimeout(c.bgCtx, c.masterTimeout(0))
		defer cancel()
		if err := m.rdb.Ping(ctx).Err(); err == nil || isAnswer(err) {
			m.suspect.Store(false)
		}
	}) {
		m.pinging.Store(false)
	}
}

func (m *master) tryAcquireSlot() bool {
	select {
	case m.slots <- struct{}{}:
		return true
	default:
		return false
	}
}

func (m *master) releaseSlot() { <-m.slots }

// wrap names master m in err (a per-master failure of a round).
func (m *master) wrap(err error) *MasterError {
	return &MasterError{Master: m.index, Addr: m.addr, Err: err}
}
