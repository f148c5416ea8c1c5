package redlock

import (
	"context"
	"errors"
	"fmt"
	"sync"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/internal/keys"
)

// pipelineGate is a go-redis hook that, while shut, holds on the client side
// every pipeline whose first command is holds ("info": probes; "evalsha":
// scripts), as a stalled master would hold them on the wire but with the
// test knowing how many are held. Everything else goes through. It records
// the first key of every script it lets through (of an acquire, each lock's key).
type pipelineGate struct {
	holds string // the first command of the pipelines it holds

	mu     sync.Mutex
	closed chan struct{} // nil while open; closed to let the held ones go
	held   int
	sent   []sentScript
	calls  int // script calls let through so far
}

// sentScript is a script that went through: its command ("evalsha", or
// "eval" after NOSCRIPT), first key (of a call that can merge locks, one
// lock's key), which call it was (the locks of one merged call share it)
// and, for a call of a script that merges, its merger.
type sentScript struct {
	name, key string
	call      int
	merged    *merger
}

// newPipelineGate is a gate for pipelines that start with holds, shut or
// open.
func newPipelineGate(holds string, shut bool) *pipelineGate {
	g := &pipelineGate{holds: holds}
	if shut {
		g.shut()
	}
	return g
}

// shut makes the gate hold pipelines from now on.
func (g *pipelineGate) shut() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed == nil {
		g.closed = make(chan struct{})
	}
}

// open lets every held pipeline, and all later ones, through.
func (g *pipelineGate) open() {
	g.mu.Lock()
	defer g.mu.Unlock()
	if g.closed != nil {
		close(g.closed)
		g.closed = nil
	}
}

// heldNow is how many pipelines wait at the gate.
func (g *pipelineGate) heldNow() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// mergedCalls are the lock keys of each call of m's merged script that
// went through with more than one lock.
func (g *pipelineGate) mergedCalls(m *merger) [][]string {
	g.mu.Lock()
	defer g.mu.Unlock()
	byCall := map[int][]string{}
	var order []int
	for _, s := range g.sent {
		if s.merged != m {
			continue
		}
		if len(byCall[s.call]) == 0 {
			order = append(order, s.call)
		}
		byCall[s.call] = append(byCall[s.call], s.key)
	}
	var out [][]string
	for _, c := range order {
		if len(byCall[c]) > 1 {
			out = append(out, byCall[c])
		}
	}
	return out
}

// sentKey reports whether a script with key as its first key went through.
func (g *pipelineGate) sentKey(key string) bool { return g.sentAs("", key) }

// sentAs reports whether a script with key as its first key went through
// as command name ("" for any).
func (g *pipelineGate) sentAs(name, key string) bool {
	g.mu.Lock()
	defer g.mu.Unlock()
	for _, s := range g.sent {
		if s.key == key && (name == "" || s.name == name) {
			return true
		}
	}
	return false
}

func (g *pipelineGate) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (g *pipelineGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }

func (g *pipelineGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		if !g.wait(ctx, cmds) {
			return ctx.Err() // not sent
		}
		return next(ctx, cmds)
	}
}

// wait holds cmds while the gate is shut and they start with g.holds, then
// records their scripts; false when ctx ended first.
func (g *pipelineGate) wait(ctx context.Context, cmds []redis.Cmder) bool {
	g.mu.Lock()
	gate := g.closed
	if len(cmds) == 0 || cmds[0].Name() != g.holds {
		gate = nil
	}
	if gate != nil {
		g.held++
	}
	g.mu.Unlock()
	if gate != nil {
		select {
		case <-gate:
		case <-ctx.Done():
		}
	}
	g.mu.Lock()
	defer g.mu.Unlock()
	if gate != nil {
		g.held--
	}
	if ctx.Err() != nil {
		return false
	}
	for _, cmd := range cmds {
		args := cmd.Args()
		if len(args) <= 3 || (cmd.Name() != "evalsha" && cmd.Name() != "eval") {
			continue
		}
		g.calls++
		keys, m := []string{fmt.Sprint(args[3])}, mergerOf(args)
		if m != nil {
			keys = lockKeys(m, args)
		}
		for _, key := range keys {
			g.sent = append(g.sent, sentScript{cmd.Name(), key, g.calls, m})
		}
	}
	return true
}

// commandGate is a go-redis hook that holds every single command (not
// pipeline) for which match is true, as a network that delivers it late
// would, until open lets it go or drop fails it unsent.
type commandGate struct {
	match func(args []any) bool

	mu      sync.Mutex
	release chan struct{} // closed by open or drop
	dropped bool
	held    int
}

func newCommandGate(match func(args []any) bool) *commandGate {
	return &commandGate{match: match, release: make(chan struct{})}
}

func (g *commandGate) heldNow() int {
	g.mu.Lock()
	defer g.mu.Unlock()
	return g.held
}

// open sends every held command, and every later one at once.
func (g *commandGate) open() { g.end(false) }

// drop fails every held command, and every later one, without sending it.
func (g *commandGate) drop() { g.end(true) }

func (g *commandGate) end(drop bool) {
	g.mu.Lock()
	defer g.mu.Unlock()
	select {
	case <-g.release:
	default:
		g.dropped = drop
		close(g.release)
	}
}

func (g *commandGate) DialHook(next redis.DialHook) redis.DialHook { return next }
func (g *commandGate) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

func (g *commandGate) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		if !g.match(cmd.Args()) {
			return next(ctx, cmd)
		}
		g.mu.Lock()
		g.held++
		g.mu.Unlock()
		<-g.release
		g.mu.Lock()
		g.held--
		dropped := g.dropped
		g.mu.Unlock()
		if dropped {
			err := errors.New("commandGate: dropped")
			cmd.SetErr(err)
			return err
		}
		return next(ctx, cmd)
	}
}

// isCertify matches internal/restart's certify script (three keys: the
// incarnation, the certificate and a guard).
func isCertify(args []any) bool {
	return len(args) > 4 && (args[0] == "evalsha" || args[0] == "eval") && fmt.Sprint(args[2]) == "3" && args[4] == keys.Cert
}
