package suite

import (
	"slices"
	"strings"
	"testing"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/generator"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
	"github.com/quorumlock/quorumlock/jepsen-like/nemesis"
)

// restart-long on real servers, set workload: the episode completes its
// steps in the order rule Q's lambda set is tested by, from the history
// alone. The first grant of the long TTL wrote its lambda entry (ending two
// long TTLs after it); the lingering hold was granted in the entry's second
// long TTL, before it ended, so its lease outlives the entry unless the
// grant raised it; the master restarted after the entry ended, with more
// than 2.5 workload TTLs of the hold still to go (room for a quarantine of
// one workload TTL, which is what the lambda-short mutant gives, and for
// the challenger's second Lock: its first, begun at the restart, waits out
// its deadline of two TTLs); and another process acquired after the restart. With the
// defaults the grant raises the entry, the master sits out the long TTL,
// and every checker is valid. jepsen-like mutants --only lambda-short
// (this nemesis in the default mix) gives mutex and set invalid.
// restart-long-merged is the same episode; its hold's acquire reaches
// the restarted master merged with another (acquire_many.lua: jepsen-like
// mutants --only lambda-short-merged), where restart-long's goes alone.
func TestRestartLongCompletesItsSteps(t *testing.T) {
	for _, fault := range []string{generator.RestartLong, generator.RestartLongMerged} {
		t.Run(fault, func(t *testing.T) { restartLongCompletesItsSteps(t, fault) })
	}
}

func restartLongCompletesItsSteps(t *testing.T, fault string) {
	res := runFaultValid(t, fault, 4*time.Second)
	ttl := res.TTLNS
	ev := res.Events
	var restart int64 = -1
	var long time.Duration // the TTL the episode used: its start event's key says "m2 +5s"
	var restarted, company string
	for _, e := range ev {
		if e.F == history.Nemesis && strings.HasPrefix(e.Value, CompanyEvent) {
			company = strings.TrimPrefix(e.Value, CompanyEvent)
		}
		if e.F == history.Nemesis && e.Value == fault+" start" {
			restart = e.TimeNS
			var l string
			restarted, l, _ = strings.Cut(e.Key, " +")
			var err error
			if long, err = time.ParseDuration(l); err != nil {
				t.Fatalf("%s's start event %q names no TTL: %v", fault, e.Key, err)
			}
			break
		}
	}
	switch merged := slices.Contains(strings.Split(company, ","), restarted); {
	case fault == generator.RestartLongMerged && !merged:
		t.Errorf("the hold's acquire went merged on %q, not on the restarted master %s", company, restarted)
	case fault == generator.RestartLong && company != "":
		t.Errorf("the hold's acquire went merged on %q; want it alone", company)
	}
	if base := generator.LongLeaseTTLs * ttl; long < base || long > base+nemesis.RestartLongTries*time.Millisecond {
		t.Fatalf("the episode's long TTL %v; want %v plus a millisecond per retry", long, base)
	}
	// the long TTL's grants: invoke and ok of each
	type grant struct {
		process  int
		inv, ok  int64
		validEnd int64
	}
	var grants []grant
	invoked := map[int]history.Event{}
	for _, e := range ev {
		if e.F != history.Acquire {
			continue
		}
		switch e.Type {
		case history.Invoke:
			invoked[e.Process] = e
		case history.OK:
			if inv := invoked[e.Process]; time.Duration(inv.TTLNS) == long {
				grants = append(grants, grant{e.Process, inv.TimeNS, e.TimeNS, e.ValidUntilNS})
			}
		}
	}
	if len(grants) == 0 {
		t.Fatal("no acquisition with the long TTL")
	}
	first := grants[0]
	entryFrom, entryTo := first.inv+2*int64(long), first.ok+2*int64(long) // the entry's end
	var hold *grant
	for k := range grants {
		if g := grants[k]; g.ok < restart && g.validEnd > restart {
			hold = &grants[k]
		}
	}
	switch {
	case hold == nil:
		t.Fatalf("no lease of the long TTL lived at the restart (%.3fs)", sec(restart))
	case hold.inv <= entryTo-int64(long) || hold.ok >= entryFrom:
		t.Errorf("the hold (invoked %.3fs, ok %.3fs) is not in the entry's second long TTL (%.3fs to %.3fs)",
			sec(hold.inv), sec(hold.ok), sec(entryTo-int64(long)), sec(entryFrom))
	case restart <= entryTo:
		t.Errorf("the master restarted at %.3fs, before the entry's end (%.3fs)", sec(restart), sec(entryTo))
	case hold.validEnd-restart < int64(5*ttl/2):
		t.Errorf("the hold is valid until %.3fs, only %v after the restart: no room for a quarantine of one TTL and a challenger's second Lock",
			sec(hold.validEnd), time.Duration(hold.validEnd-restart))
	}
	second := false
	for _, e := range ev {
		second = second || e.F == history.Acquire && e.Type == history.OK && e.TimeNS > restart && hold != nil && e.Process != hold.process
	}
	if !second {
		t.Error("no other process acquired after the restart")
	}
}

func sec(ns int64) float64 { return float64(ns) / 1e9 }
