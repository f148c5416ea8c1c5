package checker

import (
	"fmt"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// ExpiredSlackFraction of a lease's TTL is how long before its ok an
// acquisition's validity may have ended without a finding: the time
// between the lock's last check of the validity left and the moment the
// history records the ok (scheduling on a loaded machine).
const ExpiredSlackFraction = 10

// returnedExpired reports a lock acquisition whose ok came with its validity
// already over, by more than a tenth of its TTL: a lock returns a lease only
// with validity left (the "validity left" check of every Redlock), so such
// an ok is a lease the caller may act on while nobody holds the lock. The
// hold itself covers nothing (Holds drops it), so the overlap sweep cannot
// see it; this is the check that can. It returns the finding, or "" when
// the ok kept its validity, is not a lock's, or carries no TTL.
func returnedExpired(inv, ok history.Event) string {
	ttl := inv.TTLNS
	if ttl <= 0 || ok.ValidUntilNS == 0 {
		return ""
	}
	if limit, _ := inv.Limit(); limit != 0 {
		return ""
	}
	slack := ttl / ExpiredSlackFraction
	if ok.TimeNS-ok.ValidUntilNS <= slack {
		return ""
	}
	return fmt.Sprintf("key %q: process %d's acquisition returned a lease (#%d at %.6fs) whose validity had ended at %.6fs, more than a tenth of its TTL %v before: no validity was left to hold",
		ok.Key, ok.Process, ok.Index, sec(ok.TimeNS), sec(ok.ValidUntilNS), time.Duration(ttl))
}

// expiredOKs runs returnedExpired over every acquire ok of events and
// returns the findings and the first one's proof (invoke and ok).
func expiredOKs(events []history.Event) (found []string, proof []history.Event) {
	acquireOKs(events, func(inv, ok history.Event) {
		if f := returnedExpired(inv, ok); f != "" {
			found = append(found, f)
			if proof == nil {
				proof = []history.Event{inv, ok}
			}
		}
	})
	return found, proof
}

// acquireOKs calls f with every client's acquire ok of events, in order,
// and the last invoke of its process before it (its acquire's invoke).
func acquireOKs(events []history.Event, f func(inv, ok history.Event)) {
	clientEvents(events, func(inv, e history.Event) {
		if e.F == history.Acquire && e.Type == history.OK {
			f(inv, e)
		}
	})
}

// clientEvents calls f with every client event of events (the nemesis's
// are skipped), in order, and the last invoke of its process at or before
// it: for a completion, its operation's invoke; for an invoke, itself.
func clientEvents(events []history.Event, f func(inv, e history.Event)) {
	invokes := make(map[int]history.Event)
	for _, e := range events {
		if e.Process == history.NemesisProcess {
			continue
		}
		if e.Type == history.Invoke {
			invokes[e.Process] = e
		}
		f(invokes[e.Process], e)
	}
}
