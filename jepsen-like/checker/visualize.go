package checker

import (
	"fmt"
	"io"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// RegisterView says what VisualizeRegister drew.
type RegisterView struct {
	// Key is the register drawn.
	Key string
	// First and Last are the event indices of the first invoke and of the
	// last completion drawn.
	First, Last int
	// Operations is how many writes and reads were drawn, Clients the
	// processes they came from (porcupine's client i is the i-th of them).
	Operations int
	Clients    []int
	// Illegal says the operations drawn are not linearizable: they end
	// with the first window FencedRegister found illegal.
	Illegal bool
}

// VisualizeRegister writes porcupine's visualization of a bounded part of
// a history's register operations to w (an HTML page, its script inline):
// if a window is not linearizable (the first FencedRegister would report),
// that window and as many windows before it as keep at most maxOps
// operations (the failing window is drawn whole, even when larger);
// otherwise the windows of the first register around the event index
// focus, at most maxOps operations. Porcupine's times are event indices, as
// FencedRegister gives them; annotations must use the same unit (e.g. a
// fault from its start event's index to its stop event's), and are clipped
// to the part drawn (those outside it are dropped). The search is bounded
// by timeout (0: 10 s). With no write or read in the history it writes
// nothing and returns a zero RegisterView and false.
func VisualizeRegister(w io.Writer, events []history.Event, focus, maxOps int, timeout time.Duration, annotations []porcupine.Annotation) (RegisterView, bool, error) {
	if timeout <= 0 {
		timeout = 10 * time.Second
	}
	byKey := make(map[string][]regOp)
	for _, o := range registerOps(events) {
		byKey[o.key] = append(byKey[o.key], o)
	}
	if len(byKey) == 0 {
		return RegisterView{}, false, nil
	}
	deadline := time.Now().Add(timeout)
	var pick []*window
	var pickKey string
	illegalFound := false
	for _, key := range sortedKeys(byKey) {
		var recent []*window // the last windows, at most maxOps operations
		n, after := 0, 0
		var around []*window
		eachWindow(byKey[key], func(win *window, last bool) bool {
			recent, n = append(recent, win), n+len(win.ops)
			for len(recent) > 1 && n > maxOps {
				recent, n = recent[1:], n-len(recent[0].ops)
			}
			if res := checkWindow(key, win, last, deadline); res != nil && res.Verdict == Invalid {
				illegalFound, pick = true, recent
				return false
			}
			if win.ops[0].call > focus {
				after += len(win.ops)
			}
			if around == nil && (after >= maxOps/2 || last) {
				around = append([]*window(nil), recent...)
			}
			return true
		})
		if illegalFound {
			pickKey = key
			break
		}
		if pick == nil {
			pick, pickKey = around, key
		}
	}
	return drawWindows(w, pickKey, pick, illegalFound, len(events), time.Until(deadline), annotations)
}

// drawWindows runs porcupine on consecutive windows of one register, from
// the first one's starting state, and writes the visualization. Unknown
// outcomes return just after their own window, as in every window but the
// last for FencedRegister: nothing later can tell when they took effect.
func drawWindows(w io.Writer, key string, ws []*window, illegalFound bool, end int, timeout time.Duration, annotations []porcupine.Annotation) (RegisterView, bool, error) {
	view := RegisterView{Key: key, Illegal: illegalFound, First: ws[0].ops[0].call}
	client := make(map[int]int)
	var pops []porcupine.Operation
	for _, win := range ws {
		for i, op := range win.operations(false) {
			o := win.ops[i]
			id, ok := client[o.inv.Process]
			if !ok {
				id = len(view.Clients)
				client[o.inv.Process] = id
				view.Clients = append(view.Clients, o.inv.Process)
			}
			op.ClientId = id
			op.Metadata = o.String()
			view.Last = min(max(view.Last, int(op.Return)), end-1)
			pops = append(pops, op)
		}
	}
	view.Operations = len(pops)
	model := registerModel(ws[0].start)
	model.DescribeState = func(state interface{}) string {
		st := state.(regState)
		return fmt.Sprintf("token %d, value %q", st.token, st.value)
	}
	model.DescribeOperation = describeShort
	model.DescribeOperationMetadata = func(m interface{}) string { s, _ := m.(string); return s }
	_, info := porcupine.CheckOperationsVerbose(model, pops, max(timeout, time.Second))
	var clipped []porcupine.Annotation
	for _, a := range annotations {
		if a.End < int64(view.First) || a.Start > int64(view.Last) {
			continue
		}
		a.Start, a.End = max(a.Start, int64(view.First)), min(a.End, int64(view.Last))
		clipped = append(clipped, a)
	}
	info.AddAnnotations(clipped)
	if err := porcupine.Visualize(model, info, w); err != nil {
		return view, true, fmt.Errorf("checker: register visualization: %w", err)
	}
	return view, true, nil
}

// describeShort names an operation in porcupine's boxes: "w a t3" (write
// a with token 3), "r → a t3"; " rejected" or " ?" (unknown outcome) after.
func describeShort(input, output interface{}) string {
	in, out := input.(regInput), output.(regOutput)
	s := fmt.Sprintf("w %s t%d", in.value, in.token)
	if !in.write {
		s = fmt.Sprintf("r → %s t%d", out.value, in.token)
	}
	switch out.kind {
	case opFail:
		s += " rejected"
	case opInfo:
		s += " ?"
	}
	return s
}
