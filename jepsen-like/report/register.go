package report

import (
	"fmt"
	"io"
	"time"

	"github.com/anishathalye/porcupine"

	"github.com/quorumlock/quorumlock/jepsen-like/checker"
	"github.com/quorumlock/quorumlock/jepsen-like/history"
)

// registerOps is how many register operations register.html draws at most
// (a failing window is drawn whole): porcupine's page draws every one.
const registerOps = 300

type registerLink struct {
	file string
	view checker.RegisterView
}

// writeRegister writes porcupine's visualization of the register (see
// checker.VisualizeRegister): around the first fault when every window is
// linearizable. Each fault is an annotation in a row named after its kind,
// in event indices as porcupine's times are. ok is false when the history
// has no register operation.
func writeRegister(w io.Writer, events []history.Event) (bool, checker.RegisterView, error) {
	r := newRun(events, nil)
	focus := 0
	var notes []porcupine.Annotation
	for _, f := range r.faults {
		if len(notes) == 0 {
			focus = f.startIdx
		}
		notes = append(notes, porcupine.Annotation{Tag: "fault: " + f.kind, Start: int64(f.startIdx), End: int64(f.stopIdx),
			Description: f.label(), Details: f.tip(), BackgroundColor: faultColor(r.kinds, f.kind), TextColor: "#fff"})
	}
	view, ok, err := checker.VisualizeRegister(w, events, focus, registerOps, 10*time.Second, notes)
	if err != nil {
		return false, view, fmt.Errorf("report: %w", err)
	}
	return ok, view, nil
}
