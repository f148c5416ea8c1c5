package nemesis

import (
	"context"
	"errors"
	"slices"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/backend"
	"github.com/quorumlock/quorumlock/jepsen-like/generator"
)

// LeaseTTLs is an Env whose acquisitions can ask another TTL than the
// workload's; restart-long needs it (without it the step is skipped).
type LeaseTTLs interface {
	// SetLeaseTTL makes the acquisitions of slot started from now on ask
	// ttl (0: the workload's TTL).
	SetLeaseTTL(slot int, ttl time.Duration)
	// LambdaEntry is when master i's lambda set says the leases of TTL ttl
	// end; ok is false when it has no such entry or could not be read.
	LambdaEntry(ctx context.Context, i int, ttl time.Duration) (end time.Time, ok bool)
}

// Company is an Env that can send a slot's acquisitions to the masters
// merged with other acquisitions of its client: restart-long-merged's
// candidate takes its hold so, so that rule Q is tried in the script of
// merged acquires (the lambda-short-merged mutant) as restart-long tries it
// in that of lone ones (lambda-short). Without it the hold goes alone.
type Company interface {
	// SetCompany makes the acquisitions of slot started from now on go
	// merged with others (on), or alone.
	SetCompany(slot int, on bool)
}

// RestartLongTries is how many long TTL values restart-long tries before it
// skips: each waits up to the step's Hold for the majority's entries.
const RestartLongTries = 3

// restartLong is the restart-long episode, aimed at rule Q's lambda set (a
// master that lost its data sits out until every lease it may have granted
// has ended, judged per TTL from the set's entry: until when leases of
// that TTL may live). Every client asks the long TTL st.Delay. Once every
// master of the bare majority st.Majority records that TTL's entry (its
// first grant wrote now + 2 long TTLs there), nobody asks it until the
// candidate's window (then the candidate alone), the clients are confined to
// st.Majority two workload TTLs before the entries end (not before: a
// master restarted by an earlier fault is certified from sources outside
// it meanwhile), and a hold of the candidate st.Slots[0] is taken between
// one and a half and a half workload TTL before they end: that lease outlives the entries
// unless its grant raised them. The holder lingers to its validity's end;
// the others are replaced by fresh clients, which never used the long TTL,
// and the confinement is lifted. A tenth of a TTL after the entries' end,
// st.Masters[0] restarts empty. A client that judges its quarantine from an entry the
// grant did not raise (the lambda-short mutant) certifies it after one
// workload TTL, and the challenger takes the lock on it and the two masters
// outside the majority while the holder still acts; with the entry raised,
// it sits out the long TTL.
func (n *Nemesis) restartLong(ctx, heal context.Context, st generator.Step) (err error) {
	lt, ok := n.env.(LeaseTTLs)
	masters := n.env.Backend().Masters()
	m := masters[st.Masters[0]]
	if !ok {
		n.rec.Nemesis(m.Name(), st.Fault+" skipped (no long lease)")
		return nil
	}
	long, ttl := st.Delay, st.Delay/generator.LongLeaseTTLs
	var outside []int
	for j := range masters {
		if !slices.Contains(st.Majority, j) {
			outside = append(outside, j)
		}
	}
	// A try fails when the majority's entries do not line up, or when the
	// candidate gets no hold on the confined majority in its window (a master
	// of it still in quarantine after an earlier fault, say). The next try
	// asks a TTL a millisecond longer, whose entries start afresh (one per
	// TTL value).
	var h longHold
	ok = false
	why := ""
	for try := 0; try < RestartLongTries && !ok && ctx.Err() == nil; try++ {
		if try > 0 {
			n.rec.Nemesis(m.Name(), st.Fault+" retried: "+why)
			long += time.Millisecond
		}
		h, why, ok = n.takeLongHold(ctx, lt, st, long, ttl, outside)
	}
	if !ok {
		if why == "" {
			why = "the run ended before the first try"
		}
		n.rec.Nemesis(m.Name(), st.Fault+" skipped (no hold): "+why)
		return nil
	}
	// The others are replaced by fresh clients, which never ask the long
	// TTL (takeLongHold set every slot back to the workload's), held back
	// until start.
	start := make(chan struct{})
	rctx, cancel := context.WithTimeout(ctx, st.Hold)
	n.env.Rejoin(rctx, h.slot, start, h.ended)
	cancel()
	n.env.Gate(-1) // nobody competes until the master restarted
	defer n.env.Ungate()
	n.unconfine(outside)
	close(start)
	sleepUntil(ctx, h.entryEnd.Add(ttl/10)) // every entry of the long TTL ended, unless raised
	n.lost[st.Masters[0]] = time.Now()
	err = errors.Join(m.Kill(ctx), m.Start(heal, backend.NoPersistence))
	target := m.Name() + " +" + long.String()
	n.rec.Nemesis(target, st.Fault+" start")
	n.counts[st.Fault]++
	n.env.Ungate()
	select {
	case <-h.ended:
	case <-ctx.Done():
	}
	n.rec.Nemesis(target, st.Fault+" stop")
	return err
}

// longHold is the candidate's lingering hold of a restart-long try: its
// slot, closed when it ends, and the span of the majority's entries.
type longHold struct {
	slot            int
	ended           <-chan struct{}
	first, entryEnd time.Time
}

// takeLongHold is one try of restart-long with the long TTL long: it waits
// for the majority's entries (every client asking long, unconfined, so that
// a master restarted by an earlier fault can be certified meanwhile from
// sources outside the majority), confines the clients to the majority two
// workload TTLs before the entries end, and waits for the candidate's hold
// in its window. It returns the hold with the clients still confined and
// the candidate alone ungated; or why it failed, with the confinement
// lifted and nobody asking the long TTL.
func (n *Nemesis) takeLongHold(ctx context.Context, lt LeaseTTLs, st generator.Step, long, ttl time.Duration, outside []int) (longHold, string, bool) {
	for s := range n.slots {
		lt.SetLeaseTTL(s, long)
	}
	// Nobody asks the long TTL again until the candidate's window: a long
	// lease granted a long TTL after the entry's first grant would hold the
	// key right up to the entry's end and keep the candidate out of its
	// window; the long leases granted before the entries were seen end long
	// before it opens, short ones too.
	company, _ := n.env.(Company)
	if st.Fault != generator.RestartLongMerged {
		company = nil
	}
	defer func() {
		for s := range n.slots {
			lt.SetLeaseTTL(s, 0)
		}
		if company != nil {
			company.SetCompany(st.Slots[0], false)
		}
	}()
	first, entryEnd, ok := awaitLambdaEntry(ctx, lt, st.Majority, long, ttl, st.Hold)
	if !ok {
		return longHold{}, "the majority's entries of " + long.String() + " never came within half a TTL of each other", false
	}
	for s := range n.slots {
		lt.SetLeaseTTL(s, 0)
	}
	if !sleepUntil(ctx, first.Add(-2*ttl)) {
		return longHold{}, "the run ended before the confinement", false
	}
	n.rec.Nemesis(names("c", allSlots(n.slots))+"-/-"+names("m", outside), "confine start")
	for s := range n.slots {
		n.env.SetRefused(s, outside, true)
	}
	lt.SetLeaseTTL(st.Slots[0], long) // the candidate's hold outlives the entries
	if company != nil {
		company.SetCompany(st.Slots[0], true) // and goes merged with other acquires
	}
	n.env.Gate(st.Slots[0])
	h := longHold{first: first, entryEnd: entryEnd}
	if sleepUntil(ctx, first.Add(-3*ttl/2)) {
		// A hold granted before the entries end, in their second long
		// TTL: its lease ends after them unless the grant raises them.
		// Its window closes half a TTL before their end, so that a slow
		// grant (a loaded machine, -race) still lands before it.
		hctx, cancel := context.WithDeadline(ctx, first.Add(-ttl/2))
		h.slot, h.ended, ok = n.env.AwaitHold(hctx, Linger, 0)
		cancel()
		if ok {
			return h, "", true
		}
	}
	n.env.Ungate()
	n.unconfine(outside)
	return longHold{}, "the candidate got no hold of " + long.String() + " on the confined majority in its window", false
}

// unconfine lets every client reach the masters outside the majority again.
func (n *Nemesis) unconfine(outside []int) {
	for s := range n.slots {
		n.env.SetRefused(s, outside, false)
	}
	n.rec.Nemesis(names("c", allSlots(n.slots))+"-/-"+names("m", outside), "confine stop")
}

// awaitLambdaEntry polls the masters of majority (every tenth of ttl, up
// to wait) until each records an entry for TTL long in its lambda set,
// ending more than three ttl from now, and the entries end within half a
// ttl of each other (a master the clients did not ask at first, a quarantined
// one, got its entry from a later grant); it returns the earliest end and
// the latest.
func awaitLambdaEntry(ctx context.Context, lt LeaseTTLs, majority []int, long, ttl, wait time.Duration) (first, last time.Time, ok bool) {
	wctx, cancel := context.WithTimeout(ctx, wait)
	defer cancel()
	for {
		var lo, hi time.Time
		all := true
		for k, i := range majority {
			rctx, rcancel := context.WithTimeout(wctx, ttl)
			end, ok := lt.LambdaEntry(rctx, i, long)
			rcancel()
			if !ok {
				all = false
				break
			}
			if k == 0 || end.Before(lo) {
				lo = end
			}
			if k == 0 || end.After(hi) {
				hi = end
			}
		}
		if all && time.Until(lo) > 3*ttl && hi.Sub(lo) < ttl/2 {
			return lo, hi, true
		}
		if !sleep(wctx, ttl/10) {
			return lo, hi, false
		}
	}
}
