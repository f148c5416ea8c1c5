package nemesis

import (
	"context"
	"strconv"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// acquirePause stops the next acquisition of slot st.Slots[0] after its
// rounds, before it checks the validity left (a GC pause in the middle of
// Lock); keeps it stopped one TTL past the pause (its keys expire) and until
// another process holds the lock and has begun its work; then lets it go
// on, and waits for that hold to end. A correct lock then refuses the
// stopped acquisition (no validity left); one that returns the lease gives
// the lock two holders, which the set workload shows as a lost add.
func (n *Nemesis) acquirePause(ctx context.Context, st generator.Step) error {
	slot := st.Slots[0]
	paused, resume := n.env.PauseAcquisition(slot)
	defer resume()
	target := "c" + strconv.Itoa(slot)
	wctx, cancel := context.WithTimeout(ctx, st.Hold)
	defer cancel()
	select {
	case <-paused:
	case <-wctx.Done():
		resume()
		n.rec.Nemesis(target, st.Fault+" skipped (no acquisition)")
		return nil
	}
	n.rec.Nemesis(target, st.Fault+" start")
	n.counts[st.Fault]++
	ttl := st.Hold / 5
	sleep(ctx, ttl)
	hctx, hcancel := context.WithTimeout(ctx, 2*ttl)
	_, ended, ok := n.env.AwaitHold(hctx, Linger, 0)
	hcancel()
	if ok {
		sleep(ctx, ttl/10) // the holder has read what it will write back
	}
	n.rec.Nemesis(target, st.Fault+" stop")
	resume()
	if ok {
		select {
		case <-ended:
		case <-ctx.Done():
		}
	}
	return nil
}
