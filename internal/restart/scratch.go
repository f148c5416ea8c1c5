package restart

import (
	"context"
	"crypto/sha256"
	"encoding/hex"
	"errors"
	"fmt"
	"strconv"
	"strings"

	"github.com/quorumlock/quorumlock/internal/keys"
	"github.com/quorumlock/quorumlock/internal/probe"
)

// ScratchSize is c = ⌈(M+q)/2⌉, how many masters rule S certifies together:
// at least that many must carry no record at all. M = 3: 3, M = 5: 4, M = 7:
// 6, M = 9: 7 (with q a majority).
func ScratchSize(m, q int) int { return (m + q + 1) / 2 }

// ErrNotScratch is a scratch certification that did not go ahead: the masters
// were not all record-free but for its guard, or one reached carries a
// certificate. Nothing but guards was written.
var ErrNotScratch = errors.New("not a fresh cluster")

// Scratch certifies members together, from scratch (rule S of
// docs/safety.md): it writes a guard (never deleted) on each, checks after
// every guard is acknowledged that each member carries no record but that
// guard and that no master reached (members and others) carries a
// certificate, raises every member's counters to the maxima over the
// members, and certifies each one whose guard still names its lineage. m is
// the number of masters, q the quorum; members must number at least
// ScratchSize(m, q). The scratch's id depends only on the members and their
// lineages, so that clients scratching the same masters at once write the
// same guards and all succeed. It returns the certified members' indices,
// and an error for each member it could not certify.
func Scratch(ctx context.Context, members, others []Member, m, q, buckets int) ([]int, error) {
	if c := ScratchSize(m, q); len(members) < c {
		return nil, fmt.Errorf("%w: %d masters carry no record, %d needed", ErrNotScratch, len(members), c)
	}
	states, errs := each(members, func(mb Member) (State, error) { return Inspect(ctx, mb.RDB, 0) })
	if err := firstErr(members, errs); err != nil {
		return nil, err
	}
	ids := make([]string, len(members))
	h := sha256.New()
	for i, mb := range members {
		ids[i] = strconv.Itoa(mb.Index)
		fmt.Fprintf(h, "%d %s\n", mb.Index, states[i].Lineage)
	}
	scratch := hex.EncodeToString(h.Sum(nil))[:32]
	guards := make([]probe.Scratch, len(members))
	for i := range members {
		guards[i] = probe.Scratch{Lineage: states[i].Lineage, ID: scratch, Members: strings.Join(ids, ",")}
	}
	// Step 1: a guard on every member, each acknowledged before any check.
	pos := positions(members)
	_, errs = each(members, func(mb Member) (string, error) {
		g := guards[pos[mb.Index]]
		return writeGuard(ctx, mb.RDB, keys.Scratch, g.Lineage, g.String(), 0, true) // kept if there: step 2 reads whose it is
	})
	if err := firstErr(members, errs); err != nil {
		return nil, err
	}
	// Step 2: every member record-free but for its guard, every master
	// reached without a certificate.
	states, errs = each(members, func(mb Member) (State, error) { return Inspect(ctx, mb.RDB, buckets) })
	if err := firstErr(members, errs); err != nil {
		return nil, err
	}
	for i, st := range states {
		g := guards[i]
		switch {
		case st.Scratch != g.String():
			return nil, fmt.Errorf("%w: master %d carries another scratch guard (%q)", ErrNotScratch, members[i].Index, st.Scratch)
		case st.Lineage != g.Lineage:
			return nil, fmt.Errorf("%w: master %d changed lineage during the scratch", ErrNotScratch, members[i].Index)
		case st.Cert != "" || st.OldEpoch != "" || st.OldSynced != "":
			return nil, fmt.Errorf("%w: master %d carries a certificate or an earlier version's marker", ErrNotScratch, members[i].Index)
		}
	}
	otherStates, errs := each(others, func(mb Member) (State, error) { return Inspect(ctx, mb.RDB, 0) })
	for i, st := range otherStates {
		if errs[i] == nil && st.Cert != "" {
			return nil, fmt.Errorf("%w: master %d carries a certificate while %d masters carry no record: more masters lost their data than the fault model allows; see redlockctl repair",
				ErrNotScratch, others[i].Index, len(members))
		}
	}
	// Step 3: every member's counters raised to the maxima over the members.
	var all Counters
	for i, st := range states {
		all.Merge(st.Counters)
		if err := all.FoldLegacy(ctx, members[i].RDB, buckets); err != nil {
			return nil, fmt.Errorf("master %d: %w", members[i].Index, err)
		}
	}
	after, errs := each(members, func(mb Member) (State, error) { return Inspect(ctx, mb.RDB, 0) })
	if err := firstErr(members, errs); err != nil {
		return nil, err
	}
	for i, st := range after {
		if st.Scratch != guards[i].String() || st.Lineage != guards[i].Lineage {
			return nil, fmt.Errorf("%w: master %d lost its data while its counters were read", ErrNotScratch, members[i].Index)
		}
	}
	_, errs = each(members, func(mb Member) (struct{}, error) { return struct{}{}, Raise(ctx, mb.RDB, all) })
	if err := firstErr(members, errs); err != nil {
		return nil, err
	}
	// Step 4: each member certified, guarded.
	_, errs = each(members, func(mb Member) (string, error) {
		g := guards[pos[mb.Index]]
		return certify(ctx, mb.RDB, keys.Scratch, g.String(), g.Origin(), false)
	})
	var certified []int
	for i, err := range errs {
		if err == nil {
			certified = append(certified, members[i].Index)
		}
	}
	return certified, errors.Join(prefixed(members, errs)...)
}

// Complete certifies m by rule SC: its scratch guard g names its lineage and
// some member of g's scratch already carries a certificate of g's origin,
// so the scratch's checks passed and its counters were raised on every
// member before any certificate was written.
func Complete(ctx context.Context, m Member, g probe.Scratch) error {
	_, err := certify(ctx, m.RDB, keys.Scratch, g.String(), g.Origin(), false)
	return err
}

func positions(members []Member) map[int]int {
	pos := make(map[int]int, len(members))
	for i, mb := range members {
		pos[mb.Index] = i
	}
	return pos
}

func firstErr(members []Member, errs []error) error {
	for i, err := range errs {
		if err != nil {
			return fmt.Errorf("master %d: %w", members[i].Index, err)
		}
	}
	return nil
}

func prefixed(members []Member, errs []error) []error {
	var out []error
	for i, err := range errs {
		if err != nil {
			out = append(out, fmt.Errorf("master %d: %w", members[i].Index, err))
		}
	}
	return out
}
