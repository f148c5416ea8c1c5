package semaphore

import (
	"context"
	"crypto/rand"
	"encoding/hex"
	"errors"
	"fmt"
	"sync"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
	"github.com/quorumlock/quorumlock/redlock"
)

// Permit is one held place in a semaphore. It ends (Done closes) when it is
// released, when its validity (the timeout since the last successful
// acquisition or Refresh, less a drift allowance) runs out, or when an
// automatic refresh fails. A Permit is safe for concurrent use.
type Permit struct {
	s     *Semaphore
	id    string // the secret that releases the permit: never logged
	token fencing.Token
	slot  int            // -1 on one master
	lease *redlock.Lease // the slot's lease on several masters, else nil
	claim uint64         // the slot's claim (see slots.claim)

	ctx    context.Context
	cancel context.CancelCauseFunc

	opMu     sync.Mutex // serialises Refresh and Release
	released bool       // guarded by opMu

	mu         sync.Mutex
	validUntil time.Time
	ended      error         // nil while held
	changed    chan struct{} // tells the watcher validUntil moved
}

// newID returns a fresh 128-bit random permit identifier, hex-encoded.
func newID() string {
	var b [16]byte
	_, _ = rand.Read(b[:]) // never fails on Go ≥ 1.24
	return hex.EncodeToString(b[:])
}

// newPermit makes the permit of a one-master semaphore, acquired by an
// attempt that started at start, and starts its watcher.
func newPermit(s *Semaphore, id string, token fencing.Token, start time.Time) *Permit {
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &Permit{
		s: s, id: id, token: token, slot: -1,
		ctx: ctx, cancel: cancel,
		validUntil: start.Add(s.cfg.timeout - drift(s.cfg.timeout)),
		changed:    make(chan struct{}, 1),
	}
	go p.watch()
	return p
}

// newSlotPermit wraps a slot's lease: the lease's own validity, renewal and
// release are the permit's.
func newSlotPermit(s *Semaphore, slot int, claim uint64, lease *redlock.Lease) *Permit {
	ctx, cancel := context.WithCancelCause(context.Background())
	p := &Permit{s: s, token: lease.Token(), slot: slot, lease: lease, claim: claim, ctx: ctx, cancel: cancel}
	context.AfterFunc(lease.Context(), func() {
		cause := context.Cause(lease.Context())
		if errors.Is(cause, redlock.ErrReleased) {
			p.end(ErrReleased)
			return
		}
		p.end(s.slotErr("hold", slot, true, cause))
	})
	if s.cfg.autoRefresh {
		go p.watch() // the lease watches its own validity
	}
	return p
}

// Token returns the permit's fencing token: on one master (Atomic) it comes
// from one counter per semaphore, so it is greater than the token of every
// permit acquired before; on several masters it comes from the slot's
// Redlock counter, greater than the token of every earlier holder of the
// same Slot. It is 0 for Basic, Fair and Guarded.
func (p *Permit) Token() fencing.Token { return p.token }

// Slot returns the slot a multi-master permit holds (0 to limit−1): fence
// the resource "name:slot" with its Token. It is −1 on one master.
func (p *Permit) Slot() int { return p.slot }

// ValidUntil returns the local deadline of the permit; it is held only
// before it.
func (p *Permit) ValidUntil() time.Time {
	if p.lease != nil {
		return p.lease.ValidUntil()
	}
	p.mu.Lock()
	defer p.mu.Unlock()
	return p.validUntil
}

// Done returns a channel closed when the permit ends for any reason.
func (p *Permit) Done() <-chan struct{} { return p.ctx.Done() }

// Context returns a context cancelled when the permit ends. Its cause
// (context.Cause) is ErrReleased after Release, or an error matching ErrLost
// when the permit was lost.
func (p *Permit) Context() context.Context { return p.ctx }

// Err returns nil while the permit is held, and why it ended afterwards.
func (p *Permit) Err() error {
	if err := p.detached(); err != nil {
		return err
	}
	if p.lease != nil {
		if p.lease.Err() != nil {
			<-p.ctx.Done() // the AfterFunc sets the cause
			return context.Cause(p.ctx)
		}
		return nil
	}
	return p.held(p.s.cfg.clock.Now())
}

// Refresh keeps the permit for another timeout. It never re-acquires a
// permit that was lost: if the permit timed out or was removed, Refresh
// returns an error matching ErrLost and the permit ends.
//
// Errors: ErrLost as above, also after Release; another error (a timeout,
// on several masters redlock.ErrNoQuorum) when the master(s) did not
// confirm: the permit then keeps its previous validity.
func (p *Permit) Refresh(ctx context.Context) error {
	if err := p.detached(); err != nil {
		return fmt.Errorf("semaphore %q: refresh: %w", p.s.name, err)
	}
	if p.lease != nil {
		return p.refreshSlot(ctx)
	}
	p.opMu.Lock()
	defer p.opMu.Unlock()
	s := p.s
	start := s.cfg.clock.Now()
	if err := p.held(start); err != nil {
		return fmt.Errorf("semaphore %q: refresh: %w", s.name, asLost(err))
	}
	octx, cancel := context.WithTimeout(ctx, s.masterTimeout())
	err := s.one.refresh(octx, p.id)
	cancel()
	if errors.Is(err, ErrLost) {
		p.end(err)
		s.cfg.logger.Debug("semaphore: permit lost on refresh", "name", s.name, "err", err)
		return fmt.Errorf("semaphore %q: refresh: %w", s.name, err)
	}
	if err != nil {
		return fmt.Errorf("semaphore %q: refresh: %w", s.name, err)
	}
	until := start.Add(s.cfg.timeout - drift(s.cfg.timeout))
	p.mu.Lock()
	ended := p.ended
	if ended == nil {
		p.validUntil = until
	}
	p.mu.Unlock()
	if ended != nil {
		// The old validity ran out while the refresh was under way: the
		// permit ended whatever the master said; take the entry back.
		p.removeLater()
		return fmt.Errorf("semaphore %q: refresh: %w", s.name, asLost(ended))
	}
	select {
	case p.changed <- struct{}{}:
	default:
	}
	return nil
}

func (p *Permit) refreshSlot(ctx context.Context) error {
	err := p.lease.Extend(ctx, p.s.cfg.timeout)
	if err == nil {
		return nil
	}
	if errors.Is(err, redlock.ErrLockLost) {
		lostErr := p.s.slotErr("refresh", p.slot, true, err)
		p.end(lostErr)
		return lostErr
	}
	return p.s.slotErr("refresh", p.slot, false, err)
}

// Release gives the permit back and wakes waiters. The permit ends either
// way.
//
// Errors: nil when the permit was held until it was removed; an error
// matching ErrLost when it had already been lost (timed out, removed by
// another client, or a refresh failed); ErrReleased when called twice;
// another error when the master(s) did not answer (the entry then times out
// by itself).
func (p *Permit) Release(ctx context.Context) error {
	if err := p.detached(); err != nil {
		return fmt.Errorf("semaphore %q: release: %w", p.s.name, err)
	}
	if p.lease != nil {
		return p.releaseSlot(ctx)
	}
	p.opMu.Lock()
	defer p.opMu.Unlock()
	s := p.s
	if p.released {
		return fmt.Errorf("semaphore %q: release: %w", s.name, ErrReleased)
	}
	p.released = true
	lostErr := p.held(s.cfg.clock.Now())
	octx, cancel := context.WithTimeout(ctx, s.masterTimeout())
	err := s.one.release(octx, p.id)
	cancel()
	switch {
	case lostErr != nil:
		return fmt.Errorf("semaphore %q: release: %w", s.name, asLost(lostErr))
	case errors.Is(err, ErrLost):
		p.end(err)
		return fmt.Errorf("semaphore %q: release: %w", s.name, err)
	case err != nil:
		p.end(ErrReleased)
		return fmt.Errorf("semaphore %q: release: %w", s.name, err)
	}
	p.end(ErrReleased)
	return nil
}

func (p *Permit) releaseSlot(ctx context.Context) error {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	if p.released {
		return fmt.Errorf("semaphore %q: release: %w", p.s.name, ErrReleased)
	}
	p.released = true
	err := p.lease.Release(ctx)
	if err == nil {
		p.end(ErrReleased) // at once: the lease's AfterFunc runs later
		return nil
	}
	if errors.Is(err, redlock.ErrLockLost) {
		lostErr := p.s.slotErr("release", p.slot, true, err)
		p.end(lostErr)
		return lostErr
	}
	p.end(ErrReleased)
	return p.s.slotErr("release", p.slot, false, err)
}

// Detach ends the permit in this process without giving its place back:
// Done closes, the Context's cause is ErrDetached, nothing refreshes it any
// more, and Refresh and Release return ErrDetached without asking the
// masters. The place stays held there until it times out, or until
// whoever holds the permit's identifier refreshes or releases it (as
// redlockctl sem refresh and sem release do with the handle sem acquire
// prints). It does nothing to a permit that has already ended.
func (p *Permit) Detach() {
	p.opMu.Lock()
	defer p.opMu.Unlock()
	if p.released || p.Err() != nil {
		return
	}
	p.end(ErrDetached)
	if p.lease != nil {
		// The lease stays in the redlock client until it runs out or the
		// Semaphore is closed; the slot is this Semaphore's no more.
		p.s.slots.unclaim(p.slot, p.claim)
	}
}

// detached is ErrDetached once the permit was detached, else nil.
func (p *Permit) detached() error {
	p.mu.Lock()
	defer p.mu.Unlock()
	if errors.Is(p.ended, ErrDetached) {
		return ErrDetached
	}
	return nil
}

// asLost makes why a permit ended match ErrLost (a released permit, too, is
// no longer held).
func asLost(err error) error {
	if errors.Is(err, ErrLost) {
		return err
	}
	return fmt.Errorf("%w: %w", ErrLost, err)
}

// end marks the permit ended with cause, once.
func (p *Permit) end(cause error) {
	p.mu.Lock()
	if p.ended == nil {
		p.ended = cause
	}
	p.mu.Unlock()
	p.cancel(cause)
}

// held reports whether a one-master permit is held at now, ending it if its
// validity ran out.
func (p *Permit) held(now time.Time) error {
	p.mu.Lock()
	ended, until := p.ended, p.validUntil
	p.mu.Unlock()
	if ended != nil {
		return ended
	}
	if !now.Before(until) {
		err := lost("no refresh before %v", until.Format(time.RFC3339Nano))
		p.end(err)
		return err
	}
	return nil
}

// removeLater removes a lost permit's entry in the background so that others
// need not wait for it to time out.
func (p *Permit) removeLater() {
	p.s.goBackground(func() {
		ctx, cancel := context.WithTimeout(context.Background(), p.s.masterTimeout())
		defer cancel()
		_ = p.s.one.release(ctx, p.id)
	})
}

// watch ends a one-master permit when its validity runs out (a slot
// permit's lease does that itself), and refreshes the permit every interval
// when auto-refresh is on, until it ends. A refresh that finds the permit
// lost ends it; one that gets no answer (a slow or stopped master) is
// retried every quarter interval while the permit is still valid, so one
// slow reply does not cost a permit that is still held.
func (p *Permit) watch() {
	s := p.s
	clk := s.cfg.clock
	var expiryC <-chan time.Time // nil for a slot permit: never fires
	var expiry redlock.Timer
	if p.lease == nil {
		expiry = clk.NewTimer(p.ValidUntil().Sub(clk.Now()))
		defer expiry.Stop()
		expiryC = expiry.C()
	}
	var refreshC <-chan time.Time
	interval := s.cfg.refreshInterval
	if interval == 0 {
		interval = s.cfg.timeout / 3
	}
	var refresh redlock.Timer
	if s.cfg.autoRefresh {
		refresh = clk.NewTimer(interval)
		defer refresh.Stop()
		refreshC = refresh.C()
	}
	closing := s.closing()
	var refreshed chan error
	for {
		select {
		case <-p.ctx.Done():
			return
		case <-p.changed:
			resetTimer(expiry, p.ValidUntil().Sub(clk.Now()))
		case <-closing:
			closing, refreshC = nil, nil // a closed Semaphore refreshes nothing
		case <-expiryC:
			if p.held(clk.Now()) != nil {
				p.removeLater()
				return
			}
			resetTimer(expiry, p.ValidUntil().Sub(clk.Now()))
		case <-refreshC:
			// In another goroutine: the expiry is served meanwhile.
			refreshC = nil
			refreshed = make(chan error, 1)
			go func() { refreshed <- p.Refresh(p.ctx) }()
		case err := <-refreshed:
			refreshed = nil
			next := interval
			switch {
			case err == nil:
			case errors.Is(err, ErrLost):
				if p.Err() == nil {
					p.end(asLost(fmt.Errorf("auto-refresh: %w", err)))
				}
				if p.lease == nil {
					p.removeLater()
				}
				return
			default:
				s.cfg.logger.Debug("semaphore: auto-refresh failed, retrying", "name", s.name, "err", err)
				next = max(interval/4, time.Millisecond)
			}
			if closing != nil {
				refresh.Reset(next)
				refreshC = refresh.C()
			}
		}
	}
}

func resetTimer(t redlock.Timer, d time.Duration) {
	if !t.Stop() {
		select {
		case <-t.C():
		default:
		}
	}
	t.Reset(d)
}
