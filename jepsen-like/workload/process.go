package workload

import (
	"context"
	"errors"
	"fmt"
	"math/rand/v2"
	"sync/atomic"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
	"github.com/quorumlock/quorumlock/redlock"
	"github.com/quorumlock/quorumlock/redlock/semaphore"
)

// ErrUnsupported is returned for a workload this build cannot run.
var ErrUnsupported = errors.New("workload: unsupported")

// The workload names.
const (
	Lock      = "lock"
	Register  = "register"
	Semaphore = "semaphore"
	// Set: a read-modify-write of a set in a plain store, guarded by the
	// lock without fencing (Jepsen's etcd-lock analysis).
	Set = "set"
)

// Check returns nil for a workload this build runs, else an error naming
// the problem (wrapping ErrUnsupported for semaphore).
func Check(name string) error {
	switch name {
	case Lock, Register, Semaphore, Set:
		return nil
	}
	return fmt.Errorf("workload: unknown workload %q (want lock, register, semaphore or set)", name)
}

// Hooks connect a process to the nemesis.
type Hooks interface {
	// OnHold is called right after an acquisition is recorded: targeted
	// says the nemesis chose this hold and how it must behave; done is
	// called when the hold ends.
	// invokedNS is when the acquisition's invoke was recorded.
	OnHold(slot int, invokedNS int64) (mode nemesis.HoldMode, targeted bool, done func())
	// BeforeAcquire blocks while the nemesis keeps slot from competing
	// (ctx ending ends the wait).
	BeforeAcquire(ctx context.Context, slot int)
	// AfterCycle is called when the cycle that BeforeAcquire let start is
	// over (its release done, or its acquisition failed).
	AfterCycle(slot int)
}

// Process is one client process: its own redlock.Client, its own
// connections, a fresh view of the masters.
type Process struct {
	ID       int
	Slot     int
	Workload string
	Key      string // the lock key and register name
	TTL      time.Duration
	Client   *redlock.Client // lock and register
	// Sem is the semaphore of the semaphore workload, of limit Limit.
	Sem   *semaphore.Semaphore
	Limit int
	Rec   *history.Recorder
	Store Store    // register workload
	Set   SetStore // set workload
	Hooks Hooks
	Rand  *rand.Rand
	// HarnessTokens, when set (fencing off), numbers acquisitions in the
	// order the suite saw them; the number is the token of the writes.
	HarnessTokens *atomic.Uint64
	// SentAt, when set, returns when the latest attempt's first acquire
	// command left for a master (the suite's go-redis hook); an acquire's
	// ok then records it as sent_ns, the mutex checker's ground truth.
	SentAt func() time.Time
	// Bucket, when set, is the key's fence bucket ("n/B"), recorded on every
	// acquire's ok for the tokens checker.
	Bucket string
	writes int
}

// Run does acquire–work–release cycles until ctx ends, finishing the cycle
// in progress (a hold is always released).
func (p *Process) Run(ctx context.Context) {
	for ctx.Err() == nil {
		p.cycle(ctx)
		sleep(ctx, time.Duration(p.Rand.Float64()*0.1*float64(p.TTL)))
	}
}

func sleep(ctx context.Context, d time.Duration) {
	if d <= 0 {
		return
	}
	t := time.NewTimer(d)
	defer t.Stop()
	select {
	case <-ctx.Done():
	case <-t.C:
	}
}

func (p *Process) record(e history.Event) history.Event {
	e.Process, e.Key = p.ID, p.Key
	return p.Rec.Record(e)
}

// hold is a held lease or permit.
type hold interface {
	ValidUntil() time.Time
	Release(ctx context.Context) error
}

func (p *Process) acquire(ctx context.Context, ttl time.Duration) (hold, uint64, error) {
	ctx, cancel := context.WithTimeout(ctx, 2*p.TTL)
	defer cancel()
	if p.Workload == Semaphore {
		permit, err := p.Sem.Acquire(ctx)
		if err != nil {
			return nil, 0, err
		}
		return permit, uint64(permit.Token()), nil
	}
	lease, err := p.lock(ctx, ttl)
	if err != nil {
		return nil, 0, err
	}
	return lease, uint64(lease.Token()), nil
}

func (p *Process) cycle(ctx context.Context) {
	limit := ""
	if p.Workload == Semaphore {
		limit = fmt.Sprintf("limit=%d", p.Limit)
	}
	p.Hooks.BeforeAcquire(ctx, p.Slot)
	defer p.Hooks.AfterCycle(p.Slot)
	if ctx.Err() != nil {
		return
	}
	ttl := p.TTL
	if p.Workload != Semaphore {
		ttl = p.leaseTTL()
	}
	inv := p.record(history.Event{Type: history.Invoke, F: history.Acquire, Value: limit, TTLNS: int64(ttl)})
	lease, token, err := p.acquire(ctx, ttl)
	if err != nil {
		p.record(history.Event{Type: history.Fail, F: history.Acquire, Value: errValue(err)})
		return
	}
	if p.HarnessTokens != nil {
		token = p.HarnessTokens.Add(1)
	}
	validUntil := lease.ValidUntil()
	ok := history.Event{Type: history.OK, F: history.Acquire, Value: limit, Token: token, ValidUntilNS: p.Rec.Since(validUntil), Bucket: p.Bucket}
	if p.SentAt != nil && p.Workload != Semaphore {
		if t := p.SentAt(); !t.IsZero() && p.Rec.Since(t) >= inv.TimeNS {
			ok.SentNS = p.Rec.Since(t)
		}
	}
	p.record(ok)
	mode, targeted, done := p.Hooks.OnHold(p.Slot, inv.TimeNS)
	defer done()
	// Work on a context that outlives the process's: a leaving process
	// still finishes its hold.
	work := context.WithoutCancel(ctx)
	if p.Workload == Register {
		p.read(work, token)
		p.write(work, token)
	}
	var add *setAdd
	if p.Workload == Set {
		add = p.beginAdd(work)
	}
	waited := true
	switch {
	case targeted && mode == nemesis.PauseClient:
		// Stopped past the lease, like a GC pause; then it writes again.
		time.Sleep(time.Until(validUntil) + p.TTL + p.TTL/5)
		if p.Workload == Register {
			p.write(work, token)
		}
	case targeted && mode == nemesis.Linger:
		p.actUntil(work, token, validUntil)
	case targeted && mode == nemesis.SlowExtend:
		// The masters' replies are late now: the extend fails on time,
		// though every master may have applied the shorter TTL.
		validUntil = p.extend(work, lease, p.TTL*3/10, validUntil)
		p.actUntil(work, token, validUntil)
	default:
		hold := time.Duration((0.1 + 0.3*p.Rand.Float64()) * float64(p.TTL))
		validUntil = p.extend(work, lease, time.Duration((0.3+0.3*p.Rand.Float64())*float64(p.TTL)), validUntil)
		if d := time.Until(validUntil); hold > d {
			hold = d
		}
		waited = hold > 0
		time.Sleep(hold)
	}
	p.endAdd(work, add, waited, validUntil)
	p.record(history.Event{Type: history.Invoke, F: history.Release})
	rctx, cancel := context.WithTimeout(work, p.TTL)
	err = lease.Release(rctx)
	cancel()
	switch {
	case err == nil:
		p.record(history.Event{Type: history.OK, F: history.Release})
	case errors.Is(err, redlock.ErrLockLost), errors.Is(err, semaphore.ErrLost):
		p.record(history.Event{Type: history.Fail, F: history.Release, Value: errValue(err)})
	default:
		p.record(history.Event{Type: history.Info, F: history.Release, Value: errValue(err)})
	}
}

func (p *Process) holder(token uint64) string { return fmt.Sprintf("p%d-t%d", p.ID, token) }

func (p *Process) write(ctx context.Context, token uint64) {
	p.writes++
	v := fmt.Sprintf("p%d-w%d", p.ID, p.writes)
	p.record(history.Event{Type: history.Invoke, F: history.Write, Value: v, Token: token})
	err := p.Store.Write(ctx, p.Key, token, p.holder(token), v)
	p.record(history.Event{Type: outcome(err), F: history.Write, Value: v, Token: token})
}

func (p *Process) read(ctx context.Context, token uint64) {
	p.record(history.Event{Type: history.Invoke, F: history.Read, Token: token})
	v, err := p.Store.Read(ctx, p.Key, token, p.holder(token))
	p.record(history.Event{Type: outcome(err), F: history.Read, Value: v, Token: token})
}

// errValue is an error as the value of a failed acquire or release.
func errValue(err error) string { return "error: " + err.Error() }

func outcome(err error) history.Type {
	switch {
	case err == nil:
		return history.OK
	case errors.Is(err, fencing.ErrStaleToken):
		return history.Fail
	default:
		return history.Info
	}
}
