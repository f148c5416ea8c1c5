package history

import (
	"errors"
	"fmt"
)

// ErrInvalid is wrapped by every error about a malformed history or event.
var ErrInvalid = errors.New("history: invalid")

// NemesisProcess is the process number of nemesis events.
const NemesisProcess = -1

// Type is an event's type.
type Type string

// The event types.
const (
	Invoke Type = "invoke" // an operation begins
	OK     Type = "ok"     // it happened
	Fail   Type = "fail"   // it definitely did not happen
	Info   Type = "info"   // unknown; for the nemesis: a fault started or stopped
)

// F is the function of an operation.
type F string

// The operation functions.
const (
	Acquire F = "acquire"
	Release F = "release"
	Write   F = "write"
	Read    F = "read"
	Nemesis F = "nemesis"
)

// Event is one line of history.jsonl.
type Event struct {
	// Index is the event's position in the history, from 0, increasing.
	Index int `json:"index"`
	// Process is the client process (>= 0), or NemesisProcess.
	Process int  `json:"process"`
	Type    Type `json:"type"`
	F       F    `json:"f"`
	// Key is the lock key or register name; for the nemesis, the target of
	// the fault (e.g. "m2" or "p3|m0,m1").
	Key string `json:"key,omitempty"`
	// Value is the register value written or read; for a semaphore acquire,
	// "limit=N"; for the nemesis, "<fault> start" or "<fault> stop".
	Value string `json:"value,omitempty"`
	// Token is the fencing token of the hold (0: none).
	Token uint64 `json:"token,omitempty"`
	// TimeNS is monotonic nanoseconds since the run started.
	TimeNS int64 `json:"time_ns"`
	// ValidUntilNS is, on an acquire's ok, the holder's local deadline on the
	// same clock as TimeNS.
	ValidUntilNS int64 `json:"valid_until_ns,omitempty"`
}

// String is a short human form, e.g. "#12 p3 ok acquire k token=7".
func (e Event) String() string {
	s := fmt.Sprintf("#%d p%d %s %s", e.Index, e.Process, e.Type, e.F)
	if e.Process == NemesisProcess {
		s = fmt.Sprintf("#%d nemesis %s", e.Index, e.Value)
		if e.Key != "" {
			s += " " + e.Key
		}
		return s + fmt.Sprintf(" @%.3fs", float64(e.TimeNS)/1e9)
	}
	if e.Key != "" {
		s += " " + e.Key
	}
	if e.Value != "" {
		s += fmt.Sprintf(" value=%q", e.Value)
	}
	if e.Token != 0 {
		s += fmt.Sprintf(" token=%d", e.Token)
	}
	s += fmt.Sprintf(" @%.3fs", float64(e.TimeNS)/1e9)
	if e.ValidUntilNS != 0 {
		s += fmt.Sprintf(" valid_until=%.3fs", float64(e.ValidUntilNS)/1e9)
	}
	return s
}

func validType(t Type) bool {
	switch t {
	case Invoke, OK, Fail, Info:
		return true
	}
	return false
}

func validF(f F) bool {
	switch f {
	case Acquire, Release, Write, Read, Nemesis:
		return true
	}
	return false
}
