package redlock

import (
	"context"
	"sync"
)

// fifoQueues lines up the Lock callers of one Client per key, first come
// first served: only the head of a key's line makes attempts, so goroutines
// of one process never starve each other, and one process sends one attempt
// at a time per key instead of a thundering herd.
type fifoQueues struct {
	mu    sync.Mutex
	lines map[string][]chan struct{} // per key: head first; a head's channel is closed
}

func newFIFOQueues() *fifoQueues { return &fifoQueues{lines: make(map[string][]chan struct{})} }

// join waits until the caller heads key's line, ctx ends, or closing is
// closed (ErrClosed). leave must be called exactly once either way.
func (q *fifoQueues) join(ctx context.Context, key string, closing <-chan struct{}) (leave func(), err error) {
	turn := make(chan struct{})
	q.mu.Lock()
	line := append(q.lines[key], turn)
	q.lines[key] = line
	if len(line) == 1 {
		close(turn)
	}
	q.mu.Unlock()

	leave = func() { q.leave(key, turn) }
	select {
	case <-turn:
		return leave, nil
	case <-ctx.Done():
		return leave, ctxErr(ctx)
	case <-closing:
		return leave, ErrClosed
	}
}

// headIfIdle makes the caller the head of key's line when nobody waits in
// it, and reports whether it did; leave must then be called exactly once.
// Callers that come meanwhile line up behind it instead of attempting too.
func (q *fifoQueues) headIfIdle(key string) (leave func(), ok bool) {
	q.mu.Lock()
	defer q.mu.Unlock()
	if len(q.lines[key]) > 0 {
		return nil, false
	}
	q.lines[key] = []chan struct{}{headTurn}
	return func() { q.leave(key, headTurn) }, true
}

// headTurn is the turn of a head that never waited (headIfIdle): closed, and
// never closed again by leave, which closes only the next in line's turn.
var headTurn = func() chan struct{} { c := make(chan struct{}); close(c); return c }()

func (q *fifoQueues) leave(key string, turn chan struct{}) {
	q.mu.Lock()
	defer q.mu.Unlock()
	line := q.lines[key]
	for i, t := range line {
		if t != turn {
			continue
		}
		line = append(line[:i], line[i+1:]...)
		if i == 0 && len(line) > 0 {
			close(line[0]) // the next in line gets its turn
		}
		break
	}
	if len(line) == 0 {
		delete(q.lines, key)
	} else {
		q.lines[key] = line
	}
}
