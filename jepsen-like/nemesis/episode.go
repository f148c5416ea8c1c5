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

// episode runs a targeted data fault (see package generator): confine every
// client to st.Majority, wait for a holder and make it linger, lift the
// confinement, hit master st.Masters[0], replace the other clients with
// fresh ones but one long-lived watcher (watcherOf), and wait for the hold
// to end.
func (n *Nemesis) episode(ctx, heal context.Context, st generator.Step) (err error) {
	masters := n.env.Backend().Masters()
	i := st.Masters[0]
	m := masters[i]
	var outside []int
	for j := range masters {
		if !slices.Contains(st.Majority, j) {
			outside = append(outside, j)
		}
	}
	if st.Fault == generator.Failover {
		// The replica is cut off now and lags from here on: the next hold
		// is not on it.
		fresh, err := n.detachReplica(ctx, i)
		if err != nil {
			return err
		}
		if fresh {
			recertify(ctx, st)
		}
	}
	if st.Fault == generator.DataLoss {
		if err := n.prepareLoss(ctx, st); err != nil {
			return err
		}
	}
	slot, ended, ok := n.confinedHold(ctx, st, outside)
	// The other processes leave while still confined: their attempts in
	// flight cannot leave keys outside the majority. Fresh ones join after
	// the fault.
	start := make(chan struct{})
	defer func() {
		select {
		case <-start:
		default:
			close(start)
		}
	}()
	if !ok {
		n.rec.Nemesis(m.Name(), st.Fault+" skipped (no hold)")
		return nil
	}
	// One process lives on through the fault (a long-lived watcher); the
	// others are replaced.
	defer n.keepWatcher(slot, st.Fault)()
	rctx, cancel := context.WithTimeout(ctx, st.Hold)
	n.env.Rejoin(rctx, slot, start, ended)
	cancel()
	n.confine(outside, false)
	n.rec.Nemesis(names("c", allSlots(n.slots))+"-/-"+names("m", outside), "confine stop")
	// The fresh clients start now and connect; none competes until the
	// fault is in place.
	n.env.Gate(-1)
	defer n.env.Ungate()
	close(start)
	sleep(ctx, st.Settle/10)
	if st.Fault == generator.DataLoss {
		return n.dataLoss(ctx, heal, st, ended)
	}
	target := m.Name()
	n.rec.Nemesis(target, st.Fault+" start")
	n.counts[st.Fault]++
	if st.Fault != generator.RestartAOF && st.Fault != generator.ClockJump {
		n.lost[i] = time.Now() // for data-loss's fault model
	}
	var after func() error // heals the fault at its stop
	switch st.Fault {
	case generator.Restart:
		err = errors.Join(m.Kill(ctx), m.Start(heal, backend.NoPersistence))
	case generator.RestartAOF:
		err = errors.Join(m.Kill(ctx), m.Start(heal, backend.AOFAlways))
	case generator.RestartDelayed:
		err = m.Kill(ctx)
		after = func() error { return m.Start(heal, backend.NoPersistence) }
	case generator.Flush:
		err = m.Flush(ctx)
	case generator.Failover:
		err = m.Failover(ctx)
		n.env.ResetMaster(i)
	case generator.ClockJump:
		target += " +" + st.Delay.String()
		err = m.SetClockOffset(ctx, st.Delay)
		after = func() error { return m.SetClockOffset(heal, 0) }
	default:
		return fmt.Errorf("unknown episode %q", st.Fault)
	}
	n.env.Ungate()
	select {
	case <-ended:
	case <-ctx.Done():
	}
	if st.Fault == generator.RestartDelayed {
		// down past the longest TTL in use before it starts empty
		sleep(ctx, time.Until(time.Now().Add(st.Hold/3)))
	}
	if after != nil {
		err = errors.Join(err, after())
	}
	n.rec.Nemesis(target, st.Fault+" stop")
	return err
}

// awaitCandidate waits for a hold by the candidate slot st.Slots[0] alone
// for up to 2/5 of st.Hold after settle, then by any slot for the rest: the
// candidate may be unable to acquire (e.g. a fresh client that must wait out
// a quarantine), and the schedule must not depend on it.
func (n *Nemesis) awaitCandidate(ctx context.Context, st generator.Step, mode HoldMode, settle time.Duration) (int, <-chan struct{}, bool) {
	n.env.Gate(st.Slots[0])
	wctx, cancel := context.WithTimeout(ctx, settle+st.Hold*2/5)
	slot, ended, ok := n.env.AwaitHold(wctx, mode, settle)
	cancel()
	n.env.Ungate()
	if ok || ctx.Err() != nil {
		return slot, ended, ok
	}
	wctx, cancel = context.WithTimeout(ctx, st.Hold*3/5)
	defer cancel()
	return n.env.AwaitHold(wctx, mode, 0)
}

func allSlots(n int) []int {
	s := make([]int, n)
	for i := range s {
		s[i] = i
	}
	return s
}

// recertify waits, after a master got a replica, until the clients can
// count it again before they are confined. A master's first replica gives
// it a new replication id (Redis starts its backlog under a new one), so
// the defaults' clients take it as a new lineage: it votes again after the
// quarantine (the TTL) once its counters are raised from the other
// masters, which the confinement would cut to too few. Without this wait
// the default column of flush,failover found no holder and skipped the
// failover.
func recertify(ctx context.Context, st generator.Step) { sleep(ctx, 2*st.Settle) }
