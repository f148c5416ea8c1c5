package redlock

import (
	"context"
	"errors"
	"sync"
	"testing"
	"time"
)

// recorder keeps every Event.
type recorder struct {
	mu     sync.Mutex
	events []Event
}

func (r *recorder) Observe(_ context.Context, e Event) {
	r.mu.Lock()
	defer r.mu.Unlock()
	r.events = append(r.events, e)
}

func (r *recorder) find(op Op, outcome Outcome) []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	var out []Event
	for _, e := range r.events {
		if e.Op == op && e.Outcome == outcome {
			out = append(out, e)
		}
	}
	return out
}

// Every operation reaches the Observer with its outcome and each master's
// part, on real masters: acquire, extend, release, a refusal, a lost lease,
// and the fresh masters entering quarantine (young).
func TestObserverSeesEveryOperation(t *testing.T) {
	r := newRig(t, 5)
	rec := &recorder{}
	c, err := New(r.clients, WithObserver(rec), WithQuarantine(time.Minute))
	if err != nil {
		t.Fatal(err)
	}
	defer c.Close()
	ctx := context.Background()
	l, err := c.TryLock(ctx, "k", time.Second)
	if err != nil {
		t.Fatal(err)
	}
	if err := l.Extend(ctx, 2*time.Second); err != nil {
		t.Fatal(err)
	}
	if _, err := c.TryLock(ctx, "k", time.Second); !errors.Is(err, ErrNotAcquired) {
		t.Fatal(err)
	}
	if err := l.Release(ctx); err != nil {
		t.Fatal(err)
	}
	short, err := c.TryLock(ctx, "short", 300*time.Millisecond)
	if err != nil {
		t.Fatal(err)
	}
	<-short.Done()

	acq := rec.find(OpAcquire, OutcomeOK)
	if len(acq) != 2 || acq[0].Key != "k" || acq[0].Token == 0 || acq[0].Attempts != 1 || acq[0].Granted < 3 || len(acq[0].Masters) != 5 {
		t.Fatalf("acquire events: %+v", acq)
	}
	if refused := rec.find(OpAcquire, OutcomeNotAcquired); len(refused) != 1 {
		t.Fatalf("refused acquire events: %+v", refused)
	} else {
		held := 0
		for _, m := range refused[0].Masters {
			if m.Kind() == "held_by_other" {
				held++
			}
		}
		if held < 1 { // on young masters, one refusal decides the round
			t.Fatalf("refusal reports %d masters held by another owner: %+v", held, refused[0].Masters)
		}
	}
	if ext := rec.find(OpExtend, OutcomeOK); len(ext) != 1 || ext[0].AutoExtend || ext[0].Granted < 3 {
		t.Fatalf("extend events: %+v", ext)
	}
	if rel := rec.find(OpRelease, OutcomeOK); len(rel) != 1 || rel[0].Granted < 3 {
		t.Fatalf("release events: %+v", rel)
	}
	if lost := rec.find(OpLost, OutcomeLost); len(lost) != 1 || lost[0].Key != "short" || !errors.Is(lost[0].Err, ErrLockLost) {
		t.Fatalf("lost events: %+v", lost)
	}
	if entered := rec.find(OpQuarantine, OutcomeEntered); len(entered) != 0 {
		t.Fatalf("fresh masters are certified at once, yet quarantine events: %+v", entered)
	}
	// Master 0 loses its data: the next grant shows it without a
	// certificate, and the Observer hears that it no longer counts, until
	// when, and why.
	if err := r.clients[0].FlushAll(ctx).Err(); err != nil {
		t.Fatal(err)
	}
	// A round may decide before master 0 answers: lock until one hears it.
	eventually(t, 5*time.Second, "a quarantine event for the flushed master", func() bool {
		l, err := c.TryLock(ctx, "after-the-flush", time.Second)
		if err != nil {
			t.Fatal(err)
		}
		_ = l.Release(ctx)
		return len(rec.find(OpQuarantine, OutcomeEntered)) > 0
	})
	lost := rec.find(OpQuarantine, OutcomeEntered)
	if len(lost) != 1 || lost[0].Masters[0].Master != 0 || !errors.Is(lost[0].Masters[0].Err, ErrDataLost) || lost[0].ValidUntil.IsZero() {
		t.Fatalf("quarantine events after master 0 lost its data: %+v", lost)
	}
}
