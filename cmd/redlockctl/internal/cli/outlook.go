package cli

import (
	"fmt"
	"strings"

	"github.com/quorumlock/quorumlock/cluster"
	"github.com/quorumlock/quorumlock/internal/quorum"
)

// The verdicts of status (its JSON "verdict"): what a lock on these masters
// does now.
const (
	verdictOK         = "ok"          // enough masters count by themselves
	verdictAllGrant   = "all-grant"   // only a round every master grants succeeds
	verdictNoQuorum   = "no-quorum"   // a lock fails now
	verdictSameServer = "same-server" // the list names one server twice: refused
)

// outlook is what a lock on these masters would do now.
type outlook struct {
	Masters  int      // entries in the list
	Counting int      // masters whose yes counts by itself, each server once
	Needed   int      // the quorum (over the entries of the list)
	Answer   bool     // every master answers as a master: a round every master grants is possible
	Same     []string // groups of entries that are one server or one replication history
	Verdict  string
}

// lockOutlook judges the masters as a lock would, now. The rule, redlock's
// (decide in redlock/round.go, rule V in internal/probe): a
// round succeeds when Needed counting masters grant, or when every master
// grants, which needs every master to answer as a master (a quarantined
// master's yes counts in such a round); a list that names one server twice
// (or two of one replication history) is refused, and each server counts
// once. This is the one place status and doctor decide it: when the library's
// rule changes, change it here (and the texts pinned in status_outlook_test.go).
//
// f is the data-loss tolerance (--data-loss-tolerance): the quorum is
// ⌊(M+f)/2⌋ + 1.
func lockOutlook(st []cluster.MasterStatus, f int) outlook {
	o := outlook{Masters: len(st), Needed: quorum.Size(len(st), f), Answer: true}
	seen := map[string]bool{}
	for _, s := range st {
		o.Answer = o.Answer && s.Reachable && s.Role != "slave"
		if s.Same != "" && !seen[s.Same] {
			seen[s.Same] = true
			o.Same = append(o.Same, s.Same)
		}
		if counts(s) {
			o.Counting++
		}
	}
	switch {
	case len(o.Same) > 0:
		o.Verdict = verdictSameServer
	case o.Counting >= o.Needed:
		o.Verdict = verdictOK
	case o.Answer:
		o.Verdict = verdictAllGrant
	default:
		o.Verdict = verdictNoQuorum
	}
	return o
}

// counts reports whether a master's yes counts by itself now; of masters
// that are one server, only the first listed may.
func counts(s cluster.MasterStatus) bool {
	return s.Reachable && !s.Quarantined && !repeated(s)
}

// repeated reports whether a master is one server (or replication history)
// with a master listed before it.
func repeated(s cluster.MasterStatus) bool {
	return len(s.SameAs) > 0 && s.SameAs[0] < s.Master
}

// Margin is how many more counting masters may fail before a lock needs
// every master (negative: that many short of a quorum).
func (o outlook) Margin() int { return o.Counting - o.Needed }

// Standing is the count: "4 of 5 masters count, 3 needed".
func (o outlook) Standing() string { return quorum.Standing(o.Counting, o.Masters, o.Needed) }

// String is the verdict line of status.
func (o outlook) String() string {
	switch o.Verdict {
	case verdictOK:
		return fmt.Sprintf("%s: a lock can succeed now; %d more may fail.", o.Standing(), o.Margin())
	case verdictAllGrant:
		return fmt.Sprintf("%s: a lock can succeed now, but only in a round every master grants (every master answers); one master failing or refusing makes it fail.", o.Standing())
	case verdictSameServer:
		return fmt.Sprintf("%s: a lock fails now: %s; each server counts once, and a list that names one twice is refused: fix the master list.", o.Standing(), strings.Join(o.Same, "; "))
	}
	return fmt.Sprintf("%s: a lock fails now (too few masters count, and a round every master grants needs every master to answer as a master).", o.Standing())
}

// Err is status's error when a lock fails now (exit 4); nil otherwise.
func (o outlook) Err() error {
	switch o.Verdict {
	case verdictSameServer:
		return codeError{ExitNoQuorum, fmt.Errorf("no quorum: %s", strings.Join(o.Same, "; "))}
	case verdictNoQuorum:
		return codeError{ExitNoQuorum, fmt.Errorf("no quorum: %s", o.Standing())}
	}
	return nil
}
