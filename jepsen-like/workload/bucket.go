package workload

import (
	"context"
	"errors"
	"math/rand/v2"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/redlock"
)

// BucketLoad is a process that locks a key of its own, one that shares the
// workload key's fence bucket, again and again: take it (TryLock), release
// it, wait a little. Several of them race for the bucket's counter with
// stale proposals, so their write-back rounds carry one token at once; the
// tokens checker then sees whether two keys of the bucket got one token
// (the write-back must refuse a counter already at its token). The nemesis
// never targets it; its faults on the masters and the network reach it.
type BucketLoad struct {
	ID     int
	Key    string
	Bucket string // "n/B", recorded on each ok
	TTL    time.Duration
	Client *redlock.Client
	Rec    *history.Recorder
	Rand   *rand.Rand
	// Pause bounds the wait between two cycles (drawn uniformly below it).
	Pause time.Duration
}

// Run takes and releases the key until ctx ends, finishing the cycle in
// progress.
func (b *BucketLoad) Run(ctx context.Context) {
	for ctx.Err() == nil {
		b.cycle(ctx)
		sleep(ctx, time.Duration(b.Rand.Float64()*float64(b.Pause)))
	}
}

func (b *BucketLoad) record(e history.Event) history.Event {
	e.Process, e.Key = b.ID, b.Key
	return b.Rec.Record(e)
}

func (b *BucketLoad) cycle(ctx context.Context) {
	b.record(history.Event{Type: history.Invoke, F: history.Acquire, TTLNS: int64(b.TTL)})
	actx, cancel := context.WithTimeout(ctx, b.TTL)
	lease, err := b.Client.TryLock(actx, b.Key, b.TTL)
	cancel()
	if err != nil {
		b.record(history.Event{Type: history.Fail, F: history.Acquire, Value: errValue(err)})
		return
	}
	b.record(history.Event{Type: history.OK, F: history.Acquire, Token: uint64(lease.Token()),
		ValidUntilNS: b.Rec.Since(lease.ValidUntil()), Bucket: b.Bucket})
	b.record(history.Event{Type: history.Invoke, F: history.Release})
	rctx, cancel := context.WithTimeout(context.WithoutCancel(ctx), b.TTL)
	err = lease.Release(rctx)
	cancel()
	switch {
	case err == nil:
		b.record(history.Event{Type: history.OK, F: history.Release})
	case errors.Is(err, redlock.ErrLockLost):
		b.record(history.Event{Type: history.Fail, F: history.Release, Value: errValue(err)})
	default:
		b.record(history.Event{Type: history.Info, F: history.Release, Value: errValue(err)})
	}
}
