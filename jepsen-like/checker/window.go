package checker

import (
	"fmt"
	"strings"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

type regInput struct {
	write bool
	token uint64
	value string
}

type regOutput struct {
	kind  outcomeKind
	value string
}

type regState struct {
	token uint64
	value string
}

// registerModel is the fenced register starting in state init.
func registerModel(init regState) porcupine.Model {
	return porcupine.Model{
		Init: func() interface{} { return init },
		Step: func(state, input, output interface{}) (bool, interface{}) {
			st, in, out := state.(regState), input.(regInput), output.(regOutput)
			accepted := in.token >= st.token
			next := st
			if accepted {
				next.token = in.token
				if in.write {
					next.value = in.value
				}
			}
			switch out.kind {
			case opFail:
				return in.token <= st.token, st
			case opInfo: // taken effect now, if the store accepted it
				return true, next
			}
			if !accepted {
				return false, st
			}
			return in.write || out.value == st.value, next
		},
		DescribeOperation: func(input, output interface{}) string {
			in, out := input.(regInput), output.(regOutput)
			return regOp{write: in.write, token: in.token, value: map[bool]string{true: in.value, false: out.value}[in.write], kind: out.kind}.String()
		},
	}
}

// window accumulates consecutive operations of one register (in invoke
// order) and knows whether the register's state after them is the same in
// every linearization.
type window struct {
	start regState
	// setBy is the write that set start's value (zero: none, or the value
	// was carried over from further back and setBy too).
	setBy regOp
	ops   []regOp
	// maxRet is the latest return of an operation with a known outcome.
	maxRet int
	// maxOK is the highest token of start and of the ok operations: the
	// register's token after the window, if nothing unknown rose above it.
	maxOK uint64
	// last is the ok write with the highest token, the latest invoked of
	// those; lastOK says the other ok writes of its token returned before
	// it was invoked (so it is the last accepted write in every order).
	last   int // index in ops; -1: none
	lastOK bool
	// maxRetLast is the latest return of the ok writes of last's token.
	maxRetLast int
	// infoWrite, infoRead are the highest tokens of unknown-outcome writes
	// and reads (hasInfoWrite: there is one).
	infoWrite, infoRead uint64
	hasInfoWrite        bool
}

func newWindow(st regState, setBy regOp) *window {
	return &window{start: st, setBy: setBy, maxOK: st.token, maxRet: -1, last: -1}
}

func (w *window) add(o regOp) {
	w.ops = append(w.ops, o)
	switch o.kind {
	case opInfo:
		if o.write {
			w.infoWrite, w.hasInfoWrite = max(w.infoWrite, o.token), true
		} else {
			w.infoRead = max(w.infoRead, o.token)
		}
		return
	case opOK:
		w.maxOK = max(w.maxOK, o.token)
	}
	w.maxRet = max(w.maxRet, o.ret)
	if o.kind != opOK || !o.write {
		return
	}
	switch {
	case w.last < 0 || o.token > w.ops[w.last].token:
		w.last, w.lastOK, w.maxRetLast = len(w.ops)-1, true, o.ret
	case o.token == w.ops[w.last].token:
		w.lastOK = w.maxRetLast < o.call
		w.last, w.maxRetLast = len(w.ops)-1, max(w.maxRetLast, o.ret)
	}
}

// end returns the register's state after the window if an operation
// invoked at position call may start a new window: every operation with a
// known outcome returned before it, and the state is the same in every
// linearization of the window, whatever became of its unknown outcomes
// (which can then change nothing later either).
func (w *window) end(call int) (regState, bool) {
	if len(w.ops) == 0 || w.maxRet >= call || w.infoRead > w.maxOK {
		return regState{}, false
	}
	if w.last < 0 {
		// No write accepted: the value is the start's, if no unknown
		// write can have been accepted.
		if w.hasInfoWrite && w.infoWrite >= w.start.token {
			return regState{}, false
		}
		return regState{token: w.maxOK, value: w.start.value}, true
	}
	last := w.ops[w.last]
	if !w.lastOK || (w.hasInfoWrite && w.infoWrite >= last.token) {
		return regState{}, false
	}
	return regState{token: w.maxOK, value: last.value}, true
}

// eachWindow splits one register's operations (in invoke order) into
// windows and calls f with each, last says it is the final one, until f
// returns false.
func eachWindow(ops []regOp, f func(w *window, last bool) bool) {
	w := newWindow(regState{}, regOp{})
	for _, o := range ops {
		if st, ok := w.end(o.call); ok {
			if !f(w, false) {
				return
			}
			setBy := w.setBy
			if w.last >= 0 {
				setBy = w.ops[w.last]
			}
			w = newWindow(st, setBy)
		}
		w.add(o)
	}
	f(w, true)
}

// checkKey checks one register's operations (in invoke order) window by
// window. It returns nil if they are linearizable, else the invalid or
// unknown result; and the number of windows and the largest one's size.
func checkKey(key string, ops []regOp, deadline time.Time) (*Result, int, int) {
	windows, largest := 0, 0
	var res *Result
	eachWindow(ops, func(w *window, last bool) bool {
		windows++
		largest = max(largest, len(w.ops))
		res = checkWindow(key, w, last, deadline)
		return res == nil
	})
	return res, windows, largest
}

// operations are the window's operations for porcupine: times are event
// indices; unknown outcomes return after every operation of the window (at
// infinity in the last one).
func (w *window) operations(last bool) []porcupine.Operation {
	end := w.ops[len(w.ops)-1].call
	for _, o := range w.ops {
		if o.ret != infinity {
			end = max(end, o.ret)
		}
	}
	pops := make([]porcupine.Operation, len(w.ops))
	for i, o := range w.ops {
		ret := o.ret
		if ret == infinity && !last {
			ret = end + 1
		}
		pops[i] = porcupine.Operation{ClientId: o.inv.Process, Call: int64(o.call), Return: int64(ret),
			Input: regInput{write: o.write, token: o.token, value: o.value}, Output: regOutput{kind: o.kind, value: o.value}}
	}
	return pops
}

// checkWindow runs porcupine on one window.
func checkWindow(key string, w *window, last bool, deadline time.Time) *Result {
	pops := w.operations(last)
	if len(w.ops) == 1 && w.ops[0].kind != opInfo {
		// One operation alone: step the model; porcupine would say the same.
		model := registerModel(w.start)
		if ok, _ := model.Step(w.start, pops[0].Input, pops[0].Output); ok {
			return nil
		}
		r := illegal(key, w, porcupine.LinearizationInfo{})
		return &r
	}
	left := time.Until(deadline)
	if left <= 0 {
		return &Result{Verdict: Unknown, Explanation: fmt.Sprintf("register %q: the linearizability search ran out of time at #%d", key, w.ops[0].call)}
	}
	res, info := porcupine.CheckOperationsVerbose(registerModel(w.start), pops, left)
	switch res {
	case porcupine.Ok:
		return nil
	case porcupine.Illegal:
		r := illegal(key, w, info)
		return &r
	default:
		return &Result{Verdict: Unknown, Explanation: fmt.Sprintf("register %q: the linearizability search over the window of %d operations from #%d timed out", key, len(w.ops), w.ops[0].call)}
	}
}

// maxProof is how many operations a proof lists at most.
const maxProof = 12

// illegal explains a window no linearization allows, from porcupine's
// longest partial linearization: the operation that could not be placed
// (the first to return of those left out), the operations it overlaps and
// the last ones placed before it (they set the state it contradicts).
func illegal(key string, w *window, info porcupine.LinearizationInfo) Result {
	var longest []int
	for _, part := range info.PartialLinearizations() {
		for _, l := range part {
			if len(l) > len(longest) {
				longest = l
			}
		}
	}
	placed := make(map[int]bool, len(longest))
	for _, id := range longest {
		placed[id] = true
	}
	culprit := -1
	for i, o := range w.ops {
		if !placed[i] && o.kind != opInfo && (culprit < 0 || o.ret < w.ops[culprit].ret) {
			culprit = i
		}
	}
	if culprit < 0 { // cannot happen: an illegal window has a known outcome left out
		culprit = len(w.ops) - 1
	}
	c := w.ops[culprit]
	in := map[int]bool{culprit: true}
	for i, o := range w.ops {
		if len(in) >= maxProof/2 {
			break
		}
		if i != culprit && o.call < c.ret && c.call < o.ret {
			in[i] = true
		}
	}
	for k := len(longest) - 1; k >= 0 && len(in) < maxProof; k-- {
		in[longest[k]] = true
	}
	var proof []history.Event
	if w.setBy.inv != nil {
		proof = append(proof, w.setBy.events()...)
	}
	for i := range w.ops {
		if in[i] {
			proof = append(proof, w.ops[i].events()...)
		}
	}
	var steps []string
	for _, id := range longest[max(0, len(longest)-3):] {
		steps = append(steps, w.ops[id].String())
	}
	before := "from the empty register"
	if w.start != (regState{}) {
		before = fmt.Sprintf("from token %d, value %q", w.start.token, w.start.value)
		if w.setBy.inv != nil {
			before += " set by " + w.setBy.String()
		}
	}
	first, lastEv := w.ops[0].inv.Index, 0
	for _, o := range w.ops {
		evs := o.events()
		lastEv = max(lastEv, evs[len(evs)-1].Index)
	}
	exp := fmt.Sprintf("register %q is not linearizable for a fenced register (porcupine): the smallest failing window is #%d–#%d (%d operations, starting %s); no order places %s",
		key, first, lastEv, len(w.ops), before, c)
	if len(steps) > 0 {
		exp += fmt.Sprintf(" after the longest linearizable prefix (%d operations), which ends %s", len(longest), strings.Join(steps, ", "))
	}
	return Result{Verdict: Invalid, Ops: sortEvents(proof), Explanation: exp}
}
