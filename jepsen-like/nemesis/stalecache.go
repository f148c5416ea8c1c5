package nemesis

import (
	"context"
	"fmt"
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// staleCache composes a partition with a long-lived, idle client (the
// stale-cache fault): the process of slot s = st.Slots[0] lives on past its
// lifetime while the episode runs, and
//
//  1. s alone locks once (the others wait until none is in an acquisition,
//     then only s may start one), so its token cache learns the newest
//     token T; it then starts no acquisition;
//  2. the masters st.Masters (behind) are cut off from every other slot,
//     and they lock twice: the tokens pass T on the other masters only;
//  3. the others wait again until none is in an acquisition; s is cut off
//     from st.Cut[0] and locks alone, on the q masters left: behind (q−1 of
//     them at most) and one or more that saw the newer tokens.
//
// s proposes T+1 in round 1, which only behind raise their counters to: a
// correct client writes back a token above the newest, one whose fast
// path counts q−1 raises hands out T+1, at or below an earlier token (the
// tokens checker). Every wait is bounded by st.Hold; a step that does not
// come is recorded as skipped (before any cut) or missed (after), the stale
// acquisition as "stale-cache stale-lock c<s> after c<i>, c<j>" (the slots
// of the two holds in between), and every cut is healed.
func (n *Nemesis) staleCache(ctx context.Context, st generator.Step) {
	s := st.Slots[0]
	behind, away := st.Masters, st.Cut[0]
	var others []int
	for o := range n.slots {
		if o != s {
			others = append(others, o)
		}
	}
	target := fmt.Sprintf("%s-/-%s c%d-/-%s", names("c", others), names("m", behind), s, names("m", away))
	wctx, cancel := context.WithTimeout(ctx, st.Hold)
	defer cancel()
	n.env.Keep(s, true)
	defer n.env.Keep(s, false)
	defer n.env.Bench(s, false)
	defer n.env.Ungate()
	skip := func(why string) { n.rec.Nemesis("c"+strconv.Itoa(s), st.Fault+" skipped ("+why+")") }
	wait := func(ended <-chan struct{}) bool {
		select {
		case <-ended:
			return true
		case <-wctx.Done():
			return false
		}
	}

	// 1. s alone locks once; then it waits.
	n.env.Gate(s)
	if !n.env.AwaitIdle(wctx, s) {
		skip("the other slots stayed busy")
		return
	}
	holder, ended, ok := n.env.AwaitHold(wctx, Normal, 0)
	if !ok || holder != s {
		skip("no hold by c" + strconv.Itoa(s))
		return
	}
	n.env.Bench(s, true)
	if !wait(ended) {
		skip("its hold did not end")
		return
	}

	// 2. behind cut off from the others, which lock twice.
	for _, o := range others {
		n.env.SetCut(o, behind, true)
	}
	defer func() {
		for _, o := range others {
			n.env.SetCut(o, behind, false)
		}
	}()
	n.rec.Nemesis(target, st.Fault+" start")
	n.counts[st.Fault]++
	missed := func(why string) {
		n.rec.Nemesis(target, st.Fault+" missed ("+why+")")
		n.rec.Nemesis(target, st.Fault+" stop")
	}
	n.env.Ungate()
	var lockers []string
	for range 2 {
		holder, ended, ok := n.env.AwaitHold(wctx, Normal, 0)
		if !ok || !wait(ended) {
			missed("the others did not lock twice")
			return
		}
		lockers = append(lockers, "c"+strconv.Itoa(holder))
	}

	// 3. s alone, cut off from away, locks on behind and the rest.
	n.env.Gate(s)
	if !n.env.AwaitIdle(wctx, s) {
		missed("the other slots stayed busy")
		return
	}
	n.env.SetCut(s, away, true)
	defer n.env.SetCut(s, away, false)
	holder, _, ok = n.env.AwaitUnbench(wctx, s, Normal)
	if !ok {
		missed("no stale acquisition")
		return
	}
	n.rec.Nemesis(target, fmt.Sprintf("%s stale-lock c%d after %s", st.Fault, holder, strings.Join(lockers, ", ")))
	n.rec.Nemesis(target, st.Fault+" stop")
}
