package workload

import (
	"context"
	"errors"
	"fmt"
	"strings"
	"time"

	"github.com/redis/go-redis/v9"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// SetKey is the key of the set workload's set, in its store and in the
// history.
const SetKey = "set"

// SetStore is where the set workload keeps its set: a plain value read and
// written whole, with no fencing (Jepsen's etcd-lock analysis).
type SetStore interface {
	// Get returns the set's elements separated by spaces ("" when empty).
	Get(ctx context.Context) (string, error)
	// Put replaces the set.
	Put(ctx context.Context, v string) error
}

// RedisSet is a SetStore on one redis-server: GET and SET of SetKey,
// nothing else.
type RedisSet struct{ C redis.UniversalClient }

// Get reads the set.
func (r RedisSet) Get(ctx context.Context) (string, error) {
	v, err := r.C.Get(ctx, SetKey).Result()
	if errors.Is(err, redis.Nil) {
		return "", nil
	}
	return v, err
}

// Put writes the set.
func (r RedisSet) Put(ctx context.Context, v string) error { return r.C.Set(ctx, SetKey, v, 0).Err() }

// setAdd is an add in progress: the set as read when the hold began, and
// the element to add.
type setAdd struct {
	elem string
	read string
}

// beginAdd records the invoke of an add and reads the set, right after the
// acquire: Lock promised validity, the holder acts. It returns nil when
// the read failed (the add then failed: nothing was written).
func (p *Process) beginAdd(ctx context.Context) *setAdd {
	p.writes++
	a := &setAdd{elem: fmt.Sprintf("p%d-a%d", p.ID, p.writes)}
	p.Rec.Record(history.Event{Process: p.ID, Key: SetKey, Type: history.Invoke, F: history.Add, Value: a.elem})
	rctx, cancel := context.WithTimeout(ctx, p.TTL)
	defer cancel()
	v, err := p.Set.Get(rctx)
	if err != nil {
		p.Rec.Record(history.Event{Process: p.ID, Key: SetKey, Type: history.Fail, F: history.Add, Value: a.elem})
		return nil
	}
	a.read = v
	return a
}

// setMargin: a holder that waited writes its add only while more than
// TTL/setMargin of its validity is left. The write is not fenced, so a
// holder descheduled between its check and its write for longer than what
// was left (plus the drift allowance, before the keys expire) would lose
// the next holder's add with a correct lock; a tenth of the TTL keeps that
// far from what a loaded machine does, and a lease whose validity is
// wrong (a late deadline, no validity left) still writes after its keys
// expired.
const setMargin = 10

// endAdd writes the set read by beginAdd with the element added. A holder
// that waited since it acquired (waited) first checks its lease, as a
// careful user does, and gives up once less than TTL/setMargin of its
// validity is left (the add fails); one that did not wait writes at once. The add is ok when the
// write was acknowledged, info when its outcome is unknown.
func (p *Process) endAdd(ctx context.Context, a *setAdd, waited bool, validUntil time.Time) {
	if a == nil {
		return
	}
	if waited && !time.Now().Before(validUntil.Add(-p.TTL/setMargin)) {
		p.Rec.Record(history.Event{Process: p.ID, Key: SetKey, Type: history.Fail, F: history.Add, Value: a.elem})
		return
	}
	v := strings.TrimSpace(a.read + " " + a.elem)
	wctx, cancel := context.WithTimeout(ctx, p.TTL)
	defer cancel()
	typ := history.OK
	if err := p.Set.Put(wctx, v); err != nil {
		typ = history.Info
	}
	p.Rec.Record(history.Event{Process: p.ID, Key: SetKey, Type: typ, F: history.Add, Value: a.elem})
}

// ReadSet records the final read of the set as process id.
func ReadSet(ctx context.Context, s SetStore, rec *history.Recorder, id int) error {
	rec.Record(history.Event{Process: id, Key: SetKey, Type: history.Invoke, F: history.ReadSet})
	v, err := s.Get(ctx)
	if err != nil {
		rec.Record(history.Event{Process: id, Key: SetKey, Type: history.Info, F: history.ReadSet, Value: "error: " + err.Error()})
		return err
	}
	rec.Record(history.Event{Process: id, Key: SetKey, Type: history.OK, F: history.ReadSet, Value: v})
	return nil
}
