package redlock

import (
	"context"
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/fencing"
)

// LeaseState is a held lease as another process, or a later run, needs it
// to extend or release the lease (Client.Resume): its key, its value, its
// fencing token, its TTL and the end of its validity by the wall clock.
//
// Value is the lease's secret: whoever has it can release or extend the
// lease. Keep a LeaseState like a password; it is never logged.
type LeaseState struct {
	Key        string        `json:"key"`
	Value      string        `json:"value"`
	Token      fencing.Token `json:"token"` // 0 with WithFencing(false)
	TTL        time.Duration `json:"ttl"`
	ValidUntil time.Time     `json:"valid_until"` // wall clock, no monotonic reading
}

// State returns what Client.Resume needs to take this lease over. From
// then on the lease counts as shared (see Resume): its end no longer lets
// this Client overwrite its keys. It returns the lease's Err when the lease
// has ended, and an error matching ErrInvalidArgument for a nil lease or a
// lease of several keys (LockAll), which cannot be resumed.
func (l *Lease) State() (LeaseState, error) {
	if l == nil {
		return LeaseState{}, invalid("nil lease")
	}
	return l.kind.state()
}

// state is State of a lease of one key.
func (l oneKey) state() (LeaseState, error) {
	now := l.c.cfg.clock.Now()
	if err := l.held(now); err != nil {
		return LeaseState{}, err
	}
	l.mu.Lock()
	if l.ended != nil {
		err := l.ended
		l.mu.Unlock()
		return LeaseState{}, err
	}
	l.shared = true // from now on its end proves nothing about the value (end)
	ttl, validUntil := l.ttl, l.validUntil
	l.mu.Unlock()
	return LeaseState{
		Key: l.key, Value: l.value, Token: l.token, TTL: ttl,
		ValidUntil: now.Round(0).Add(validUntil.Sub(now)), // the local deadline on the wall clock
	}, nil
}

// Resume takes over a lease from its State, written by this or another
// process. Extend and Release of the returned Lease are owner-checked on
// every master by the lease's value, as the original's are, and its Done,
// Err and Context report its end the same way. Resume sends nothing.
//
// The two leases are one lock, not two holders: whichever releases it
// releases it for both, after which the other's Extend fails with
// ErrLockLost, but the other's Err stays nil until its own validity ends,
// so the code behind the two must act as one holder (hand the lease over,
// then stop using the original). Neither lease's end lets its Client
// overwrite the keys it left behind, as a Client does after its own
// releases: the other lease may still hold them.
//
// The returned lease is valid until s.ValidUntil as this Client's clock
// reads it, and never longer than the validity of a fresh s.TTL from now:
// a state from another machine is only as good as the agreement of the two
// wall clocks, which the drift allowance (WithDriftFactor) must cover.
// opts may ask for auto-extension (WithAutoExtend); with less validity left
// than its interval, the first renewal starts at half the validity left.
//
// A lost copy (its renewal failed, or its validity ran out) leaves the keys
// to expire rather than deleting them, since the other copy may still hold
// them. An original with auto-extension keeps renewing after its State was
// handed over, until it is released or its Client closes: hand over leases
// without auto-extension, or let the original's process do the renewing.
//
// Errors: ErrClosed after Close; ErrLockLost (wrapped) when s.ValidUntil
// has passed; ErrInvalidArgument (wrapped) for an empty or reserved key, an
// empty value, a TTL TryLock would refuse, no ValidUntil, a token above
// fencing.MaxToken, a token given to a Client built WithFencing(false), or
// an auto-extend interval TryLock would refuse.
func (c *Client) Resume(s LeaseState, opts ...LockOption) (*Lease, error) {
	lc, err := c.prepare(context.Background(), s.Key, s.TTL, opts) // as TryLock's arguments
	if err != nil {
		return nil, err
	}
	switch {
	case s.Value == "":
		return nil, invalid("empty lease value")
	case s.ValidUntil.IsZero():
		return nil, invalid("no ValidUntil")
	case s.Token > fencing.MaxToken:
		return nil, invalid("token %d is above fencing.MaxToken", s.Token)
	case s.Token != 0 && !c.cfg.fencing:
		return nil, invalid("token %d given to a Client without fencing (WithFencing(false))", s.Token)
	}
	now := c.cfg.clock.Now()
	left := min(s.ValidUntil.Sub(now.Round(0)), c.validity(s.TTL))
	if left <= 0 {
		return nil, fmt.Errorf("%w: validity ended at %s", ErrLockLost, s.ValidUntil.Format(time.RFC3339Nano))
	}
	lc.shared = true
	return c.newLease(s.Key, s.Value, s.TTL, s.Token, now.Add(left), nil, lc), nil
}
