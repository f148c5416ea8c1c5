package checker

import (
	"fmt"
	"sort"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// FencedRegister checks the register operations (write, read) of a history:
// the store never accepted (ok) a write whose token was below that of a
// write it had accepted before (completed before the stale write was
// invoked), and the history is linearizable for a fenced register (a call
// with token T is accepted iff T is at least the highest token seen, and an
// accepted call raises it to T; a rejected call, "fail", changes nothing).
// Writes and reads completed with info (unknown outcome) or never completed
// are left out: the stores the suite uses answer every call.
type FencedRegister struct {
	// Timeout bounds the linearizability search; on expiry the verdict is
	// unknown. Default 10 s.
	Timeout time.Duration
}

// Name returns "fenced-register".
func (FencedRegister) Name() string { return "fenced-register" }

type regOp struct {
	key        string
	write      bool
	token      uint64
	value      string
	ok         bool
	call, ret  int64
	inv, compl history.Event
}

type regInput struct {
	write bool
	token uint64
	value string
}

type regOutput struct {
	ok    bool
	value string
}

type regState struct {
	token uint64
	value string
}

var registerModel = porcupine.Model{
	Partition: func(ops []porcupine.Operation) [][]porcupine.Operation {
		byKey := make(map[string][]porcupine.Operation)
		for _, op := range ops {
			k := op.Metadata.(string)
			byKey[k] = append(byKey[k], op)
		}
		out := make([][]porcupine.Operation, 0, len(byKey))
		for _, k := range sortedKeys(byKey) {
			out = append(out, byKey[k])
		}
		return out
	},
	Init: func() interface{} { return regState{} },
	Step: func(state, input, output interface{}) (bool, interface{}) {
		st, in, out := state.(regState), input.(regInput), output.(regOutput)
		if !out.ok {
			return in.token <= st.token, st
		}
		if in.token < st.token {
			return false, st
		}
		if in.write {
			return true, regState{token: in.token, value: in.value}
		}
		return out.value == st.value, regState{token: in.token, value: st.value}
	},
	DescribeOperation: func(input, output interface{}) string {
		in, out := input.(regInput), output.(regOutput)
		res := "rejected"
		if out.ok {
			res = "ok"
		}
		if in.write {
			return fmt.Sprintf("write(%q, token %d) %s", in.value, in.token, res)
		}
		return fmt.Sprintf("read(token %d) → %q %s", in.token, out.value, res)
	},
}

// Check runs the stale-write check, then porcupine.
func (r FencedRegister) Check(events []history.Event) Result {
	ops := registerOps(events)
	if len(ops) == 0 {
		return Result{Checker: r.Name(), Verdict: Valid, Explanation: "no completed write or read in the history"}
	}
	if res, bad := staleWrites(ops); bad {
		res.Checker = r.Name()
		return res
	}
	pops := make([]porcupine.Operation, len(ops))
	for i, o := range ops {
		pops[i] = porcupine.Operation{ClientId: o.inv.Process, Call: o.call, Return: o.ret, Metadata: o.key,
			Input: regInput{write: o.write, token: o.token, value: o.value}, Output: regOutput{ok: o.ok, value: o.value}}
	}
	timeout := r.Timeout
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	switch porcupine.CheckOperationsTimeout(registerModel, pops, timeout) {
	case porcupine.Ok:
		return Result{Checker: r.Name(), Verdict: Valid,
			Explanation: fmt.Sprintf("%d register operations, no stale write accepted, linearizable", len(ops))}
	case porcupine.Illegal:
		var proof []history.Event
		for _, o := range ops {
			proof = append(proof, o.inv, o.compl)
		}
		if len(proof) > 40 {
			proof = proof[len(proof)-40:]
		}
		return Result{Checker: r.Name(), Verdict: Invalid, Ops: sortEvents(proof),
			Explanation: fmt.Sprintf("%d register operations are not linearizable for a fenced register (porcupine)", len(ops))}
	default:
		return Result{Checker: r.Name(), Verdict: Unknown,
			Explanation: fmt.Sprintf("linearizability search over %d operations timed out after %s", len(ops), timeout)}
	}
}

// registerOps pairs the invokes and completions of writes and reads.
func registerOps(events []history.Event) []regOp {
	var ops []regOp
	open := make(map[int]history.Event)
	for _, e := range events {
		if e.F != history.Write && e.F != history.Read {
			continue
		}
		if e.Type == history.Invoke {
			open[e.Process] = e
			continue
		}
		inv, ok := open[e.Process]
		delete(open, e.Process)
		if !ok || e.Type == history.Info {
			continue
		}
		o := regOp{key: inv.Key, write: inv.F == history.Write, token: inv.Token, value: inv.Value,
			ok: e.Type == history.OK, call: inv.TimeNS, ret: e.TimeNS, inv: inv, compl: e}
		if !o.write {
			o.value = e.Value
		}
		ops = append(ops, o)
	}
	return ops
}

// staleWrites finds an accepted write whose token is below that of a write
// accepted, and completed, before it was invoked.
func staleWrites(ops []regOp) (Result, bool) {
	byKey := make(map[string][]regOp)
	for _, o := range ops {
		if o.write && o.ok {
			byKey[o.key] = append(byKey[o.key], o)
		}
	}
	for _, key := range sortedKeys(byKey) {
		ws := byKey[key]
		byRet := append([]regOp(nil), ws...)
		sort.SliceStable(byRet, func(i, j int) bool { return byRet[i].ret < byRet[j].ret })
		j := 0
		var best *regOp
		for _, w := range ws { // ws is in invoke order
			for ; j < len(byRet) && byRet[j].ret < w.call; j++ {
				if best == nil || byRet[j].token > best.token {
					best = &byRet[j]
				}
			}
			if best != nil && w.token < best.token {
				return Result{Verdict: Invalid, Ops: sortEvents([]history.Event{best.inv, best.compl, w.inv, w.compl}),
					Explanation: fmt.Sprintf("register %q: write with token %d (#%d, process %d) accepted after the write with token %d (#%d, process %d)",
						key, w.token, w.compl.Index, w.inv.Process, best.token, best.compl.Index, best.inv.Process)}, true
			}
		}
	}
	return Result{}, false
}
