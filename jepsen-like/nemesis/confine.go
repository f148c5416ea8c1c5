package nemesis

import (
	"context"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// ConfineTries is how many times an episode confines the clients to its
// majority and waits for a hold before it skips its fault.
const ConfineTries = 3

// confinedHold confines every client to st.Majority (outside: the other
// masters) and waits for a hold (awaitCandidate). A confined majority may be
// unable to grant the lock for a while: a master of it that restarted or
// lost data sits out its quarantine, and the defaults count it again only
// once its counters were raised from enough other masters, which the
// confinement cuts off. Whether the previous step left such a master behind
// by the time the episode starts is timing, so instead of skipping the
// fault on the first empty wait the episode lifts the confinement, lets
// the masters be counted again (recertify) and tries again, up to
// ConfineTries times. On ok the clients are still confined (the caller
// lifts it); otherwise they are not.
func (n *Nemesis) confinedHold(ctx context.Context, st generator.Step, outside []int) (slot int, ended <-chan struct{}, ok bool) {
	target := names("c", allSlots(n.slots)) + "-/-" + names("m", outside)
	for try := 1; ; try++ {
		n.rec.Nemesis(target, "confine start")
		n.confine(outside, true)
		slot, ended, ok = n.awaitCandidate(ctx, st, Linger, st.Settle)
		if ok {
			return slot, ended, true
		}
		n.confine(outside, false)
		n.rec.Nemesis(target, "confine stop")
		if try == ConfineTries || ctx.Err() != nil {
			return 0, nil, false
		}
		n.log.Info("episode found no hold; confining again", "fault", st.Fault, "try", try)
		recertify(ctx, st)
	}
}

// confine makes (or stops making) every client's links to outside refuse
// connections.
func (n *Nemesis) confine(outside []int, on bool) {
	for s := range n.slots {
		n.env.SetRefused(s, outside, on)
	}
}
