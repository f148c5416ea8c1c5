package nemesis

import (
	"context"
	"errors"
	"fmt"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// Prepare sets up, before any client starts, what the schedule's episodes
// would otherwise set up in the run where the clients see it: the replica
// that the first failover of each master promotes (a failover episode, or
// data-loss's failover kind). Attaching a master's first replica gives the
// master a new replication id, which the defaults' restart rules take as a
// new lineage: set up during the run, the master sits out a quarantine and
// then needs its counters raised from three other masters, which an
// episode's confinement cuts off, so whether the episode found a hold
// depended on timing. Attached now, the replica follows its master until
// the episode detaches it (the master's replication id stays), so it lags
// from the episode on, as before. Masters whose backend cannot attach a
// replica ahead (backend.ReplicaAttacher) keep the old order: the replica
// starts during the episode, which then waits for the master to be counted
// again (recertify).
func (n *Nemesis) Prepare(ctx context.Context, sched generator.Schedule) error {
	masters := n.env.Backend().Masters()
	var errs []error
	for _, st := range sched.Steps {
		for _, i := range promoted(st) {
			if _, done := n.attached[i]; done || i < 0 || i >= len(masters) {
				continue
			}
			a, ok := masters[i].(backend.ReplicaAttacher)
			if !ok {
				continue
			}
			if err := a.AttachReplica(ctx); err != nil {
				errs = append(errs, fmt.Errorf("nemesis: prepare %s: %w", masters[i].Name(), err))
				continue
			}
			n.attached[i] = true
		}
	}
	return errors.Join(errs...)
}

// promoted lists the masters whose replica st promotes.
func promoted(st generator.Step) []int {
	switch st.Fault {
	case generator.Failover:
		return st.Masters[:min(1, len(st.Masters))]
	case generator.DataLoss:
		var out []int
		for k, i := range st.Masters {
			if k < len(st.Kinds) && st.Kinds[k] == generator.LossFailover {
				out = append(out, i)
			}
		}
		return out
	}
	return nil
}

// detachReplica cuts off master i's replica before its failover: one that
// Prepare attached needs no wait (the master's replication id did not
// change); one started now does (recertify).
func (n *Nemesis) detachReplica(ctx context.Context, i int) (fresh bool, err error) {
	prepared := n.attached[i]
	delete(n.attached, i) // a later failover of i needs a new replica
	if err := n.env.Backend().Masters()[i].DetachReplica(ctx); err != nil {
		return false, err
	}
	return !prepared, nil
}
