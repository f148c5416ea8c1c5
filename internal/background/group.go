package background

import "sync"

// Group starts goroutines and waits for them. The zero value is not usable:
// call New. A Group is safe for concurrent use.
type Group struct {
	mu      sync.RWMutex // orders Go against Stop
	stopped chan struct{}
	wg      sync.WaitGroup
}

// New returns a running Group.
func New() *Group { return &Group{stopped: make(chan struct{})} }

// Go runs f in a goroutine that Wait waits for. Once the Group is stopped it
// runs nothing and reports false.
func (g *Group) Go(f func()) bool {
	g.mu.RLock()
	defer g.mu.RUnlock()
	if g.Stopped() {
		return false
	}
	g.wg.Add(1)
	go func() {
		defer g.wg.Done()
		f()
	}()
	return true
}

// Stop stops the Group: Done closes and Go refuses new goroutines. It reports
// whether this call stopped it (false on later calls).
func (g *Group) Stop() bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.Stopped() {
		return false
	}
	close(g.stopped)
	return true
}

// Done is closed once the Group is stopped: goroutines watch it to end.
func (g *Group) Done() <-chan struct{} { return g.stopped }

// Stopped reports whether Stop was called.
func (g *Group) Stopped() bool {
	select {
	case <-g.stopped:
		return true
	default:
		return false
	}
}

// Wait waits for every goroutine Go started.
func (g *Group) Wait() { g.wg.Wait() }
