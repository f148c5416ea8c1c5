package history

import (
	"sync"
	"time"
)

// Recorder collects the events of a running test. It is safe for concurrent
// use; indices and times are assigned under one lock, so both increase in the
// order events are recorded.
type Recorder struct {
	start time.Time

	mu     sync.Mutex
	events []Event
}

// NewRecorder starts the run's clock now.
func NewRecorder() *Recorder { return &Recorder{start: time.Now()} }

// Since converts a time.Time carrying a monotonic reading (time.Now and
// values derived from it) to nanoseconds since the run started.
func (r *Recorder) Since(t time.Time) int64 { return int64(t.Sub(r.start)) }

// Now is the run's clock: nanoseconds since the run started.
func (r *Recorder) Now() int64 { return r.Since(time.Now()) }

// Record stamps e with the next index and the current time, appends it and
// returns it.
func (r *Recorder) Record(e Event) Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	e.Index = len(r.events)
	e.TimeNS = r.Now()
	if n := len(r.events); n > 0 && e.TimeNS < r.events[n-1].TimeNS {
		e.TimeNS = r.events[n-1].TimeNS
	}
	r.events = append(r.events, e)
	return e
}

// Nemesis records a nemesis event: value is "<fault> start" or "<fault> stop".
func (r *Recorder) Nemesis(target, value string) Event {
	return r.Record(Event{Process: NemesisProcess, Type: Info, F: Nemesis, Key: target, Value: value})
}

// Events returns a copy of the events so far.
func (r *Recorder) Events() []Event {
	r.mu.Lock()
	defer r.mu.Unlock()
	return append([]Event(nil), r.events...)
}
