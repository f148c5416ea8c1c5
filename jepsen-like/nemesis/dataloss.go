package nemesis

import (
	"context"
	"errors"
	"fmt"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// The data-loss nemesis (an episode, see episode): the holder is confined to
// a set S of as many masters as the clients' quorum, and while it holds,
// st.Masters (1 to f masters of S) lose data one after the other, each
// after its seeded offset, each its own way (st.Kinds): FLUSHALL, a
// restart without persistence, a restart from an RDB saved before the
// hold, or a failover to a replica detached before the hold. Then a fresh
// challenger tries to take the lock.
//
// Fault model: at most st.MaxLost (f) distinct masters lose data within any
// st.Window (two TTLs; a lease lives less than one TTL from the start of
// the attempt that took it), counting every fault of the run that loses
// data (kill, restart, restart-delayed, flush, failover, data-loss).
// Before each loss the nemesis waits until the master can lose data within
// that bound. Each step's losses come after an acquisition (its hold) that
// followed the previous step's, so between two acquisitions of the key at
// most f masters lose data: the model of docs/safety.md's tolerant quorum.

// prepareLoss saves what a rollback returns to and detaches the replicas a
// failover promotes, before the confinement: the hold is on neither.
func (n *Nemesis) prepareLoss(ctx context.Context, st generator.Step) error {
	if len(st.Kinds) != len(st.Masters) || len(st.Offsets) != len(st.Masters) || st.MaxLost < 1 {
		return fmt.Errorf("data-loss step with %d masters, %d kinds, %d offsets, at most %d lost: malformed",
			len(st.Masters), len(st.Kinds), len(st.Offsets), st.MaxLost)
	}
	masters := n.env.Backend().Masters()
	var err error
	detached := false
	for k, i := range st.Masters {
		switch st.Kinds[k] {
		case generator.LossSnapshot:
			err = errors.Join(err, masters[i].Snapshot(ctx))
		case generator.LossFailover:
			fresh, e := n.detachReplica(ctx, i)
			err = errors.Join(err, e)
			detached = detached || fresh
		}
	}
	if detached && err == nil {
		recertify(ctx, st)
	}
	return err
}

// dataLoss makes st.Masters lose data while the hold lives, lets the
// challenger in, and records each loss's stop when the hold has ended.
// Each loss is recorded as "data-loss start" with target "<master> <kind>"
// once the data is gone.
func (n *Nemesis) dataLoss(ctx, heal context.Context, st generator.Step, ended <-chan struct{}) (err error) {
	masters := n.env.Backend().Masters()
	var targets []string
	for k, i := range st.Masters {
		if !sleep(ctx, st.Offsets[k]) || !n.awaitWindow(ctx, i, st.MaxLost, st.Window) {
			break
		}
		m, kind := masters[i], st.Kinds[k]
		var e error
		switch kind {
		case generator.LossFlush:
			e = m.Flush(ctx)
		case generator.LossRestart:
			e = errors.Join(m.Kill(ctx), m.Start(heal, backend.NoPersistence))
		case generator.LossSnapshot:
			e = errors.Join(m.Kill(ctx), m.Start(heal, backend.FromSnapshot))
		case generator.LossFailover:
			e = m.Failover(ctx)
			n.env.ResetMaster(i)
		default:
			e = fmt.Errorf("unknown data-loss kind %q", kind)
		}
		n.lost[i] = time.Now() // also when a start failed: the data is gone
		if e != nil {
			err = errors.Join(err, fmt.Errorf("%s %s: %w", kind, m.Name(), e))
			continue
		}
		target := m.Name() + " " + kind
		n.rec.Nemesis(target, st.Fault+" start")
		n.counts[st.Fault+"/"+kind]++
		targets = append(targets, target)
	}
	if len(targets) > 0 {
		n.counts[st.Fault]++
	}
	n.env.Ungate()
	select {
	case <-ended:
	case <-ctx.Done():
	}
	for _, t := range targets {
		n.rec.Nemesis(t, st.Fault+" stop")
	}
	return err
}

// awaitWindow waits until master i may lose data with at most maxLost
// distinct masters losing data within any window: until fewer than maxLost
// others lost data within the window before now. It returns false if ctx
// ends first.
func (n *Nemesis) awaitWindow(ctx context.Context, i, maxLost int, window time.Duration) bool {
	for {
		now := time.Now()
		var recent []time.Time
		for j, t := range n.lost {
			if j != i && now.Sub(t) < window {
				recent = append(recent, t)
			}
		}
		if len(recent) < maxLost {
			return true
		}
		// the (len-maxLost+1)-th oldest must leave the window
		slices.SortFunc(recent, time.Time.Compare)
		if !sleepUntil(ctx, recent[len(recent)-maxLost].Add(window)) {
			return false
		}
	}
}
