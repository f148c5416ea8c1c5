package redislog

import (
	"context"
	"errors"
	"fmt"
	"log"
	"log/slog"
	"net"
	"os"
	"runtime"
	"slices"
	"sync"
	"sync/atomic"
	"weak"

	"github.com/redis/go-redis/v9"
)

// Level is the level routed lines are logged at: the error a failed dial
// causes reaches the caller anyway, with its cause.
const Level = slog.LevelDebug

// Message is the message of a routed line; its attributes are "line" (what
// go-redis printed) and, for a failed dial, "master" (the address dialed).
const Message = "go-redis"

// route is where one hook's lines go; a nil logger drops them.
type route struct{ logger *slog.Logger }

// NewHook returns the hook that routes one client's go-redis lines to l (nil:
// they are dropped). Add it with AddHook; adding several to one client (one
// per Client built on it) sends each line to every one of their loggers.
func NewHook(l *slog.Logger) redis.Hook { return &hook{r: &route{logger: l}} }

type hook struct{ r *route }

func (h *hook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			err = tag(err, h.r, addr)
		}
		return conn, err
	}
}

func (h *hook) ProcessHook(next redis.ProcessHook) redis.ProcessHook {
	return func(ctx context.Context, cmd redis.Cmder) error {
		return next(withRoute(ctx, h.r), cmd)
	}
}

func (h *hook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		return next(withRoute(ctx, h.r), cmds)
	}
}

// dialError is a failed dial of a routed client: it reads and matches as
// the error it wraps.
type dialError struct {
	err    error
	addr   string
	routes []*route
}

func (e *dialError) Error() string { return e.err.Error() }
func (e *dialError) Unwrap() error { return e.err }

// tag adds r to err's routes (err is this dial's own: the hooks of one
// client wrap each other, inner first, on the dialing goroutine).
func tag(err error, r *route, addr string) error {
	var de *dialError
	if errors.As(err, &de) {
		if !slices.Contains(de.routes, r) {
			de.routes = append(de.routes, r)
		}
		return err
	}
	return &dialError{err: err, addr: addr, routes: []*route{r}}
}

type ctxKey struct{}

// withRoute marks ctx with r (added to the routes it already carries). The
// value is the *route itself in the common case of one (a single
// allocation per command), a []*route beyond.
func withRoute(ctx context.Context, r *route) context.Context {
	have := ctxRoutes(ctx)
	switch {
	case slices.Contains(have, r):
		return ctx
	case len(have) == 0:
		return context.WithValue(ctx, ctxKey{}, r)
	}
	return context.WithValue(ctx, ctxKey{}, append(slices.Clip(have), r))
}

// ctxRoutes returns the routes ctx carries.
func ctxRoutes(ctx context.Context) []*route {
	switch v := ctx.Value(ctxKey{}).(type) {
	case *route:
		return []*route{v}
	case []*route:
		return v
	}
	return nil
}

// Router is the go-redis logger Install sets.
type Router struct {
	stderr *log.Logger // go-redis's default: stderr, "redis: ", date and file:line
}

// NewRouter returns a Router whose unrouted lines go to stderr in go-redis's
// default format.
func NewRouter() *Router {
	return &Router{stderr: log.New(os.Stderr, "redis: ", log.LstdFlags|log.Lshortfile)}
}

// Printf implements go-redis's logging interface.
func (r *Router) Printf(ctx context.Context, format string, v ...any) {
	routes, addr := routesOf(ctx, v)
	msg := fmt.Sprintf(format, v...)
	if len(routes) == 0 {
		// Called by go-redis's package logger, itself called at the line that
		// logs: 3 frames up is that line, as with go-redis's own logger.
		_ = r.stderr.Output(3, msg)
		return
	}
	attrs := []slog.Attr{slog.String("line", msg)}
	if addr != "" {
		attrs = append(attrs, slog.String("master", addr))
	}
	for _, rt := range routes {
		if rt.logger != nil {
			rt.logger.LogAttrs(context.WithoutCancel(ctx), Level, Message, attrs...)
		}
	}
}

// routesOf collects the routes of a line: its context's, and those of any
// failed dial among its arguments.
func routesOf(ctx context.Context, v []any) (routes []*route, addr string) {
	if ctx != nil {
		routes = ctxRoutes(ctx)
	}
	for _, a := range v {
		err, ok := a.(error)
		if !ok {
			continue
		}
		var de *dialError
		if errors.As(err, &de) {
			addr = de.addr
			for _, rt := range de.routes {
				if !slices.Contains(routes, rt) {
					routes = append(slices.Clip(routes), rt)
				}
			}
		}
	}
	return routes, addr
}

var (
	installOnce sync.Once
	kept        atomic.Bool
)

// Install sets a Router as go-redis's logger, the first time it is called
// in the process, unless Keep was called before. It reports whether this
// call installed it.
func Install() (installed bool) {
	if kept.Load() {
		return false
	}
	installOnce.Do(func() {
		if !kept.Load() {
			redis.SetLogger(NewRouter())
			installed = true
		}
	})
	return installed
}

// Keep makes every later Install do nothing: go-redis's logger stays what
// it is (its default, or whatever the program sets with redis.SetLogger).
// Called after an Install, it changes nothing already installed.
func Keep() { kept.Store(true) }

// dialHook routes only a client's failed dials (the lines go-redis prints
// for every operation against a dead master): no per-command cost.
type dialHook struct{ r *route }

func (h *dialHook) DialHook(next redis.DialHook) redis.DialHook {
	return func(ctx context.Context, network, addr string) (net.Conn, error) {
		conn, err := next(ctx, network, addr)
		if err != nil {
			err = tag(err, h.r, addr)
		}
		return conn, err
	}
}

func (h *dialHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *dialHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return next
}

// routed holds, per go-redis client Route was given, its weak pointer, so
// that a client is hooked once however many redlock Clients are built on it
// (hooks cannot be removed: one per New would pile up).
var routed sync.Map // weak.Pointer of the client → struct{}

// Route installs the Router (Install) and has c's failed dials routed to l
// (nil: dropped), once per client: a second Route of the same client, with
// another logger, changes nothing. Clients of other types than
// *redis.Client, *redis.ClusterClient and *redis.Ring are left alone.
func Route(c redis.UniversalClient, l *slog.Logger) {
	Install()
	switch v := c.(type) {
	case *redis.Client:
		routeOnce(v, c, l)
	case *redis.ClusterClient:
		routeOnce(v, c, l)
	case *redis.Ring:
		routeOnce(v, c, l)
	}
}

// routeOnce hooks c (whose pointer is p) unless it was, and forgets it once p
// is collected.
func routeOnce[T any](p *T, c redis.UniversalClient, l *slog.Logger) {
	w := weak.Make(p)
	if _, loaded := routed.LoadOrStore(w, struct{}{}); loaded {
		return
	}
	runtime.AddCleanup(p, func(w weak.Pointer[T]) { routed.Delete(w) }, w)
	c.AddHook(&dialHook{r: &route{logger: l}})
}
