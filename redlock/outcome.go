package redlock

// outcome is what became of one master's command in a round, as far as the
// round knows when it decides.
type outcome uint8

const (
	// waiting: sent, no answer yet, and worth waiting for.
	waiting outcome = iota
	// silent: sent, no answer yet, and not waited for (the per-master timeout
	// passed, or the master is suspect: it let an earlier round time out).
	silent
	// yes: the master did what was asked (granted, raised, extended, deleted).
	yes
	// no: the master refused: the key belongs to another owner.
	no
	// errorReply: the master answered with an error. It was reached, and
	// nothing of ours is still queued there; go-redis may have retried a
	// command that had run, so a key of ours may exist.
	errorReply
	// transport: a network error. The command may still sit in the master's
	// socket and run later (a SIGSTOPped master runs it on SIGCONT).
	transport
	// unsent: nothing reached the master (too many commands in flight, or it
	// was not asked). Nothing of ours is there.
	unsent
)

// answered reports whether the master answered (yes, no or an error reply).
func (o outcome) answered() bool { return o == yes || o == no || o == errorReply }

// open reports whether the master's answer is still to come.
func (o outcome) open() bool { return o == waiting || o == silent }

// mayHoldOurKey reports whether a SET of ours may exist on the master, now
// or later: everything but a refusal and a command never sent.
func (o outcome) mayHoldOurKey() bool { return o != no && o != unsent }

// settled reports whether no command of ours can still be queued at the
// master, so that one owner-checked delete answered "not there" proves that
// nothing of ours is left.
func (o outcome) settled() bool { return o == yes || o == no || o == errorReply || o == unsent }

// decision is a round's verdict so far.
type decision uint8

const (
	undecided decision = iota
	held               // enough masters said yes
	failed             // enough can no longer say yes
)

// decide is the quorum rule of every round. votes[i] says whether master i's
// yes counts by itself (it is out of quarantine); q is the quorum over all
// len(out) masters. The round succeeds when q counting masters said yes, or
// when every master said yes: under the fault model (fewer than q masters
// lost data within one quarantine) a live lease of another owner would still
// be on at least one master, which would have refused, so a round that every
// master granted may count quarantined masters too (docs/safety.md). It fails
// when neither can happen whatever the masters still waited for answer.
func decide(out []outcome, votes []bool, q int) decision {
	counted, pending := 0, 0
	everyYes, everyYesPossible := true, true
	for i, o := range out {
		everyYes = everyYes && o == yes
		everyYesPossible = everyYesPossible && (o == yes || o == waiting)
		if votes[i] {
			switch o {
			case yes:
				counted++
			case waiting:
				pending++
			}
		}
	}
	switch {
	case counted >= q || everyYes:
		return held
	case counted+pending < q && !everyYesPossible:
		return failed
	}
	return undecided
}

// failureKind tells "held by another owner" from "too few answers": a round
// failed with ErrNotAcquired when some master refused, and with ErrNoQuorum
// when only errors and silence stood in the way.
func failureKind(out []outcome) error {
	for _, o := range out {
		if o == no {
			return ErrNotAcquired
		}
	}
	return ErrNoQuorum
}
