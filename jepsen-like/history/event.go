package history

import (
	"errors"
	"fmt"
	"strconv"
	"strings"
	"time"
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
	// Add is the set workload's read-modify-write: the invoke when the
	// holder read the set, the ok when its write of the set with Value
	// added was acknowledged.
	Add F = "add"
	// ReadSet is the set workload's final read; Value lists the elements,
	// separated by spaces.
	ReadSet F = "read-set"
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
	// TTLNS is, on an acquire's invoke, the TTL asked for (0: not recorded;
	// histories written before it was added have none). The mutex checker
	// then bounds the ok's valid_until_ns by invoke + TTL − drift allowance.
	TTLNS int64 `json:"ttl_ns,omitempty"`
	// SentNS is, on an acquire's ok, optional: when the first command of the
	// winning attempt left for a master, as the suite's go-redis hook saw it
	// (0: not recorded). The attempt's validity counts from a moment before
	// it, so the mutex checker bounds valid_until_ns by SentNS + TTL − drift
	// allowance.
	SentNS int64 `json:"sent_ns,omitempty"`
	// Bucket is, on a lock acquire's ok, optional: the fence bucket of the
	// key, "n/B" (bucket n of the B of redlock.WithFenceBuckets), as the
	// suite computed it ("": not recorded). The tokens checker then checks
	// that no token is handed out twice within a bucket, across its keys.
	Bucket string `json:"bucket,omitempty"`
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
	if e.TTLNS != 0 {
		s += fmt.Sprintf(" ttl=%v", time.Duration(e.TTLNS))
	}
	if e.SentNS != 0 {
		s += fmt.Sprintf(" sent=%.6fs", float64(e.SentNS)/1e9)
	}
	if e.Bucket != "" {
		s += " bucket=" + e.Bucket
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
	case Acquire, Release, Write, Read, Nemesis, Add, ReadSet:
		return true
	}
	return false
}

// Limit reads a semaphore acquire's value: "limit=N" gives N (N ≥ 1), ""
// gives 0 (a lock), anything else an error. Only acquire invokes and oks
// carry a limit; a failed acquire's value is its error.
func (e Event) Limit() (int, error) {
	if e.F != Acquire || e.Value == "" || (e.Type != Invoke && e.Type != OK) {
		return 0, nil
	}
	s, ok := strings.CutPrefix(e.Value, "limit=")
	if !ok {
		return 0, fmt.Errorf("%w: event #%d: acquire value %q (want empty for a lock or limit=N for a semaphore)", ErrInvalid, e.Index, e.Value)
	}
	n, err := strconv.Atoi(s)
	if err != nil || n < 1 {
		return 0, fmt.Errorf("%w: event #%d: semaphore limit %q is not a positive integer", ErrInvalid, e.Index, s)
	}
	return n, nil
}
