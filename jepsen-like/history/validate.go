package history

import "fmt"

// Validate checks a whole history: indices run 0, 1, 2, ... without a gap,
// times never go back (events with equal times are ordered by index), types
// and functions are known, nemesis events are info events of process -1,
// every completion follows an invoke of the same process, function and key,
// no process invokes twice without a completion in between, an acquire's ok
// carries valid_until_ns, an acquire's value is empty (a lock) or limit=N
// with N ≥ 1 (a semaphore, the same on its invoke and ok), and ttl_ns is
// positive and on an acquire's invoke only, sent_ns on an acquire's ok only
// and not after it, bucket on an acquire's ok only. An invoke left open at the end
// is allowed (it counts as info). Errors wrap ErrInvalid and name the event.
func Validate(events []Event) error {
	open := make(map[int]Event)
	for i, e := range events {
		if err := checkEvent(e); err != nil {
			return err
		}
		if e.Index != i {
			if i == 0 {
				return fmt.Errorf("%w: the first event has index %d, want 0", ErrInvalid, e.Index)
			}
			return fmt.Errorf("%w: event %d: index %d after %d (want %d: indices run from 0 without gaps)", ErrInvalid, i, e.Index, events[i-1].Index, i)
		}
		if i > 0 {
			prev := events[i-1]
			if e.TimeNS < prev.TimeNS {
				return fmt.Errorf("%w: event #%d: time_ns %d goes back (previous %d)", ErrInvalid, e.Index, e.TimeNS, prev.TimeNS)
			}
		}
		if e.Process == NemesisProcess {
			continue
		}
		inv, pending := open[e.Process]
		switch {
		case e.Type == Invoke && pending:
			return fmt.Errorf("%w: event #%d: process %d invokes %s while #%d (%s) has no completion", ErrInvalid, e.Index, e.Process, e.F, inv.Index, inv.F)
		case e.Type == Invoke:
			open[e.Process] = e
		case !pending:
			return fmt.Errorf("%w: event #%d: %s %s of process %d without an invoke", ErrInvalid, e.Index, e.Type, e.F, e.Process)
		case inv.F != e.F:
			return fmt.Errorf("%w: event #%d: completion %s of process %d does not match its invoke #%d (%s)", ErrInvalid, e.Index, e.F, e.Process, inv.Index, inv.F)
		case inv.Key != e.Key:
			return fmt.Errorf("%w: event #%d: completion of process %d has key %q, its invoke #%d has key %q", ErrInvalid, e.Index, e.Process, e.Key, inv.Index, inv.Key)
		case e.F == Acquire && e.Type == OK && e.Value != "" && e.Value != inv.Value:
			return fmt.Errorf("%w: event #%d: acquire ok with value %q, its invoke #%d has %q", ErrInvalid, e.Index, e.Value, inv.Index, inv.Value)
		default:
			delete(open, e.Process)
		}
	}
	return nil
}

func checkEvent(e Event) error {
	switch {
	case !validType(e.Type):
		return fmt.Errorf("%w: event #%d: unknown type %q (want invoke, ok, fail or info)", ErrInvalid, e.Index, e.Type)
	case !validF(e.F):
		return fmt.Errorf("%w: event #%d: unknown f %q (want acquire, release, write, read, add, read-set or nemesis)", ErrInvalid, e.Index, e.F)
	case e.TimeNS < 0:
		return fmt.Errorf("%w: event #%d: negative time_ns %d", ErrInvalid, e.Index, e.TimeNS)
	case e.F == Nemesis && (e.Process != NemesisProcess || e.Type != Info):
		return fmt.Errorf("%w: event #%d: a nemesis event must be an info event of process %d", ErrInvalid, e.Index, NemesisProcess)
	case e.F != Nemesis && e.Process < 0:
		return fmt.Errorf("%w: event #%d: negative process %d for a client operation", ErrInvalid, e.Index, e.Process)
	case e.F != Nemesis && e.Key == "":
		return fmt.Errorf("%w: event #%d: %s without a key", ErrInvalid, e.Index, e.F)
	case e.F == Acquire && e.Type == OK && e.ValidUntilNS == 0:
		return fmt.Errorf("%w: event #%d: acquire ok without valid_until_ns", ErrInvalid, e.Index)
	case e.ValidUntilNS != 0 && !(e.F == Acquire && e.Type == OK):
		return fmt.Errorf("%w: event #%d: valid_until_ns belongs on an acquire's ok only", ErrInvalid, e.Index)
	case e.TTLNS < 0:
		return fmt.Errorf("%w: event #%d: negative ttl_ns %d", ErrInvalid, e.Index, e.TTLNS)
	case e.TTLNS != 0 && !(e.F == Acquire && e.Type == Invoke):
		return fmt.Errorf("%w: event #%d: ttl_ns belongs on an acquire's invoke only", ErrInvalid, e.Index)
	case e.SentNS < 0:
		return fmt.Errorf("%w: event #%d: negative sent_ns %d", ErrInvalid, e.Index, e.SentNS)
	case e.SentNS != 0 && !(e.F == Acquire && e.Type == OK):
		return fmt.Errorf("%w: event #%d: sent_ns belongs on an acquire's ok only", ErrInvalid, e.Index)
	case e.SentNS > e.TimeNS:
		return fmt.Errorf("%w: event #%d: sent_ns %d after the ok's time_ns %d", ErrInvalid, e.Index, e.SentNS, e.TimeNS)
	case e.Bucket != "" && !(e.F == Acquire && e.Type == OK):
		return fmt.Errorf("%w: event #%d: bucket belongs on an acquire's ok only", ErrInvalid, e.Index)
	}
	if _, err := e.Limit(); err != nil {
		return err
	}
	return nil
}
