package suite

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"sync"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/jepsen-like/workload"
	"github.com/quorumlock/quorumlock/redlock"
)

// Company: restart-long-merged's candidate takes its hold in one call with
// another acquire of its client on every master, so that rule Q is tried in
// the script of merged acquires (acquire_many.lua), which a process taking
// one lock at a time never runs otherwise. A redlock Client merges the
// acquires queued for a master while both of its pipelines to it are out
// (redlock/merge.go). So a hook on each of the candidate's connections
// holds the pipelines of two companion acquires (other keys) until both of
// every master's pipelines are held there; the hold's attempt (a TryLock)
// and a third companion then queue behind them for companionQueueing; then
// one held pipeline per master is dropped, never sent (a companion sent
// alone would write the lambda entry through acquire.lua), and the freed
// worker takes both queued calls as one; the other is dropped once the
// attempt returned. A refused attempt (the key held) is made again the
// same way, so the attempt that takes the lock went merged (a Lock would
// wait for the release and then try alone). The companions ask the hold's
// TTL, so the merged call's rule Q reads one entry. The hooks see on which
// masters each attempt went merged, and a nemesis event says so
// (CompanyEvent).

var (
	_ nemesis.Company  = (*env)(nil)
	_ workload.Company = (*env)(nil)
)

// companionPrefix starts the companions' keys.
const companionPrefix = "company:"

// companionRetry is the pause between an accompanied attempt that was
// refused (the key held) and the next.
const companionRetry = 20 * time.Millisecond

// CompanyEvent starts the value of the nemesis event recorded after an
// accompanied acquisition; the names of the masters its acquire reached
// merged follow, comma-separated.
const CompanyEvent = "company: merged on "

// companionQueueing is how long the companions' pipelines have to reach
// the hooks, and then how long the hold's attempt and the third companion
// have to reach their masters' queues (a channel send each, after the
// attempt's set-up) before a pipeline is let go. Both together stay well
// within the per-master timeout of the hold's TTL (a tenth of it), past
// which a held pipeline gives up and frees its worker. Where it was not
// enough, the hold went alone on that master, and the nemesis event says
// so.
const companionQueueing = 100 * time.Millisecond

// errCompanionDropped fails a companion's pipeline that a hook held: it is
// never sent.
var errCompanionDropped = errors.New("suite: a companion's pipeline, held to occupy a worker, dropped unsent")

// SetCompany makes slot's acquisitions go merged with companions (on), or
// alone.
func (e *env) SetCompany(s int, on bool) {
	sl := e.slots[s]
	sl.mu.Lock()
	defer sl.mu.Unlock()
	sl.accompanied = on
}

// Accompany takes the lock with lock (alone), or, when SetCompany asked it
// for slot s, with try, merged with companions on every master, once
// companionRetry after each refusal until it is granted or ctx ends: the
// attempt that takes the lock is always a merged one (a Lock would wait
// for the holder's release and then try alone). ttl is the hold's.
func (e *env) Accompany(ctx context.Context, s int, c *redlock.Client, ttl time.Duration, lock, try func(context.Context) (*redlock.Lease, error)) (*redlock.Lease, error) {
	sl := e.slots[s]
	sl.mu.Lock()
	on, hooks := sl.accompanied, sl.company
	sl.mu.Unlock()
	if !on || len(hooks) == 0 {
		return lock(ctx)
	}
	for {
		l, err := e.accompany(ctx, s, c, ttl, hooks, try)
		if err == nil || ctx.Err() != nil || !errors.Is(err, redlock.ErrNotAcquired) {
			return l, err
		}
		sleepCtx(ctx, companionRetry)
	}
}

// accompany is one attempt of Accompany.
func (e *env) accompany(ctx context.Context, s int, c *redlock.Client, ttl time.Duration, hooks []*companyHook, try func(context.Context) (*redlock.Lease, error)) (*redlock.Lease, error) {
	for _, h := range hooks {
		h.shut()
	}
	var (
		wg     sync.WaitGroup
		mu     sync.Mutex
		leases []*redlock.Lease
	)
	companion := func(k int) {
		wg.Go(func() {
			l, err := c.TryLock(context.WithoutCancel(ctx), fmt.Sprintf("%s%d:%d", companionPrefix, s, k), ttl)
			if err == nil {
				mu.Lock()
				leases = append(leases, l)
				mu.Unlock()
			}
		})
	}
	companion(0)
	companion(1)
	// Both of each master's pipelines (redlock's batchWorkers), on the
	// masters the client sends to (not those it knows are down).
	wctx, cancel := context.WithTimeout(ctx, companionQueueing)
	for _, h := range hooks {
		h.awaitHeld(wctx, 2)
	}
	cancel()
	type result struct {
		lease *redlock.Lease
		err   error
	}
	got := make(chan result, 1)
	go func() {
		l, err := try(ctx)
		got <- result{l, err}
	}()
	companion(2)
	sleepCtx(ctx, companionQueueing)
	for _, h := range hooks {
		h.dropOne() // one worker takes both queued calls as one
	}
	r := <-got
	for _, h := range hooks {
		h.open()
	}
	var merged []string
	for i, h := range hooks {
		if h.merged() {
			merged = append(merged, e.b.Masters()[i].Name())
		}
	}
	wg.Wait()
	for _, l := range leases {
		rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), time.Second)
		_ = l.Release(rctx) // a companion's key; its TTL ends it otherwise
		cancel()
	}
	e.rec.Nemesis(fmt.Sprintf("c%d", s), CompanyEvent+strings.Join(merged, ","))
	return r.lease, r.err
}

// companyHook is a go-redis hook on one of a process's connections (one
// master): while shut, it holds every pipeline whose acquires are all
// companions'. dropOne stops holding and drops the oldest held one unsent,
// which frees one worker; open drops the rest. It notes whether key's
// acquire went to the master merged with others since it was last shut.
type companyHook struct {
	key string

	mu        sync.Mutex
	holding   bool
	held      []chan struct{} // closed to drop the pipeline
	changed   chan struct{}   // closed and replaced when held grows
	wasMerged bool
}

var _ redis.Hook = (*companyHook)(nil)

func newCompanyHook(key string) *companyHook {
	return &companyHook{key: key, changed: make(chan struct{})}
}

func (h *companyHook) shut() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding, h.wasMerged = true, false
}

// awaitHeld waits until n pipelines are held, or ctx ends.
func (h *companyHook) awaitHeld(ctx context.Context, n int) {
	for {
		h.mu.Lock()
		count, changed := len(h.held), h.changed
		h.mu.Unlock()
		if count >= n {
			return
		}
		select {
		case <-changed:
		case <-ctx.Done():
			return
		}
	}
}

// dropOne holds no more pipelines and drops the oldest held one.
func (h *companyHook) dropOne() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding = false
	if len(h.held) > 0 {
		close(h.held[0])
		h.held = h.held[1:]
	}
}

// open holds no more pipelines and drops every held one.
func (h *companyHook) open() {
	h.mu.Lock()
	defer h.mu.Unlock()
	h.holding = false
	for _, ch := range h.held {
		close(ch)
	}
	h.held = nil
}

func (h *companyHook) merged() bool {
	h.mu.Lock()
	defer h.mu.Unlock()
	return h.wasMerged
}

// hold returns the channel a pipeline of cmds waits on before it is
// dropped, or nil to send it.
func (h *companyHook) hold(cmds []redis.Cmder) <-chan struct{} {
	h.mu.Lock()
	defer h.mu.Unlock()
	companions, others := 0, 0
	for _, c := range cmds {
		locks, ours := 0, false
		for k := range acquiredLocks(c.Args()) {
			locks++
			ours = ours || k == h.key
			if strings.HasPrefix(k, companionPrefix) {
				companions++
			} else {
				others++
			}
		}
		h.wasMerged = h.wasMerged || ours && locks > 1 // one call of several locks: a merged one
	}
	if !h.holding || companions == 0 || others > 0 {
		return nil
	}
	ch := make(chan struct{})
	h.held = append(h.held, ch)
	close(h.changed)
	h.changed = make(chan struct{})
	return ch
}

func (h *companyHook) DialHook(next redis.DialHook) redis.DialHook          { return next }
func (h *companyHook) ProcessHook(next redis.ProcessHook) redis.ProcessHook { return next }
func (h *companyHook) ProcessPipelineHook(next redis.ProcessPipelineHook) redis.ProcessPipelineHook {
	return func(ctx context.Context, cmds []redis.Cmder) error {
		held := h.hold(cmds)
		if held == nil {
			return next(ctx, cmds)
		}
		select {
		case <-held:
		case <-ctx.Done():
		}
		for _, c := range cmds {
			c.SetErr(errCompanionDropped)
		}
		return errCompanionDropped
	}
}
