package checker

import (
	"fmt"
	"math"
	"sort"
	"time"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// FencedRegister checks the register operations (write, read) of a history:
// the store never accepted (ok) a write whose token was below that of a
// write it had accepted before (completed before the stale write was
// invoked), and the history is linearizable for a fenced register (a call
// with token T is accepted iff T is at least the highest token seen, and an
// accepted call raises it to T; a rejected call, "fail", changes nothing).
//
// Operations completed with info (unknown outcome), or never completed, may
// have taken effect at any time after their invoke, or never: porcupine
// sees them with an infinite return time, as Knossos does.
//
// Each register's operations are checked in windows, one after the other:
// a window ends where no operation is open and the register's state (token,
// value) is the same in every linearization of the window, so that the next
// window starts from it. The search stops at the first window that is not
// linearizable, which is also the proof. Memory and time grow with the
// largest window, not with the history.
type FencedRegister struct {
	// Timeout bounds the linearizability search of the whole history; on
	// expiry the verdict is unknown. Default 10 s.
	Timeout time.Duration
}

// Name returns "fenced-register".
func (FencedRegister) Name() string { return "fenced-register" }

// Applies reports whether the history has a write or a read.
func (FencedRegister) Applies(events []history.Event) bool {
	for _, e := range events {
		if e.F == history.Write || e.F == history.Read {
			return true
		}
	}
	return false
}

// infinity is the return position of an operation with an unknown outcome.
const infinity = math.MaxInt64

type outcomeKind uint8

const (
	opOK outcomeKind = iota
	opFail
	opInfo
)

type regOp struct {
	key   string
	write bool
	token uint64
	value string // written, or read
	kind  outcomeKind
	// call and ret are the invoke's and the completion's indices (ret is
	// infinity for info): indices order events exactly, equal times too.
	call, ret int
	inv       *history.Event // into the checked history
	compl     *history.Event // nil for an invoke left open
}

func (o regOp) events() []history.Event {
	if o.compl == nil {
		return []history.Event{*o.inv}
	}
	return []history.Event{*o.inv, *o.compl}
}

func (o regOp) String() string {
	var s string
	if o.write {
		s = fmt.Sprintf("write(%q, token %d)", o.value, o.token)
	} else {
		s = fmt.Sprintf("read(token %d) → %q", o.token, o.value)
	}
	switch o.kind {
	case opFail:
		s += " rejected"
	case opInfo:
		s += " unknown outcome"
	}
	if o.compl == nil {
		return fmt.Sprintf("%s (#%d, process %d, never completed)", s, o.inv.Index, o.inv.Process)
	}
	return fmt.Sprintf("%s (#%d–#%d, process %d)", s, o.inv.Index, o.compl.Index, o.inv.Process)
}

// Check runs the stale-write check, then the windowed linearizability
// check. With no write or read completed with ok or fail the verdict is
// unknown.
func (r FencedRegister) Check(events []history.Event) Result {
	ops := registerOps(events)
	known := 0
	for _, o := range ops {
		if o.kind != opInfo {
			known++
		}
	}
	if known == 0 {
		return Result{Checker: r.Name(), Verdict: Unknown,
			Explanation: fmt.Sprintf("%d register operations, none with a known outcome: nothing to check", len(ops))}
	}
	if res, bad := staleWrites(ops); bad {
		res.Checker = r.Name()
		return res
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	deadline := time.Now().Add(timeout)
	byKey := make(map[string][]regOp)
	for _, o := range ops {
		byKey[o.key] = append(byKey[o.key], o)
	}
	windows, largest := 0, 0
	for _, key := range sortedKeys(byKey) {
		res, n, big := checkKey(key, byKey[key], deadline)
		windows += n
		largest = max(largest, big)
		if res != nil {
			res.Checker = r.Name()
			if res.Verdict == Unknown {
				res.Explanation += fmt.Sprintf(" (timeout %s)", timeout)
			}
			return *res
		}
	}
	return Result{Checker: r.Name(), Verdict: Valid,
		Explanation: fmt.Sprintf("%d register operations, no stale write accepted, linearizable (%d windows, the largest of %d operations)", len(ops), windows, largest)}
}

// registerOps pairs the invokes and completions of writes and reads, in
// invoke order; an invoke left open at the end is an info operation.
func registerOps(events []history.Event) []regOp {
	var ops []regOp
	open := make(map[int]int) // process → index in ops
	for k := range events {
		e := &events[k]
		if e.F != history.Write && e.F != history.Read {
			continue
		}
		if e.Type == history.Invoke {
			open[e.Process] = len(ops)
			ops = append(ops, regOp{key: e.Key, write: e.F == history.Write, token: e.Token, value: e.Value,
				kind: opInfo, call: e.Index, ret: infinity, inv: e})
			continue
		}
		i, ok := open[e.Process]
		if !ok {
			continue
		}
		delete(open, e.Process)
		o := &ops[i]
		o.compl = e
		switch e.Type {
		case history.OK:
			o.kind, o.ret = opOK, e.Index
		case history.Fail:
			o.kind, o.ret = opFail, e.Index
		}
		if !o.write {
			o.value = e.Value
		}
	}
	return ops
}

// staleWrites finds an accepted write whose token is below that of a write
// accepted, and completed, before it was invoked: no linearization allows
// it (the register's token only grows, and the earlier write raised it).
func staleWrites(ops []regOp) (Result, bool) {
	byKey := make(map[string][]regOp)
	for _, o := range ops {
		if o.write && o.kind == opOK {
			byKey[o.key] = append(byKey[o.key], o)
		}
	}
	for _, key := range sortedKeys(byKey) {
		ws := byKey[key]
		sort.SliceStable(ws, func(i, j int) bool { return ws[i].call < ws[j].call })
		byRet := append([]regOp(nil), ws...)
		sort.SliceStable(byRet, func(i, j int) bool { return byRet[i].ret < byRet[j].ret })
		j := 0
		var best *regOp
		for _, w := range ws { // in invoke order
			for ; j < len(byRet) && byRet[j].ret < w.call; j++ {
				if best == nil || byRet[j].token > best.token {
					best = &byRet[j]
				}
			}
			if best != nil && w.token < best.token {
				return Result{Verdict: Invalid, Ops: sortEvents([]history.Event{*best.inv, *best.compl, *w.inv, *w.compl}),
					Explanation: fmt.Sprintf("register %q: write with token %d (#%d, process %d) invoked after the write with token %d (#%d, process %d) was accepted, and accepted too",
						key, w.token, w.compl.Index, w.inv.Process, best.token, best.compl.Index, best.inv.Process)}, true
			}
		}
	}
	return Result{}, false
}
