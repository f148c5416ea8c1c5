// Package report writes report.html: a self-contained page (inline SVG and
// CSS, no script, no external asset) with the checkers' verdicts, then a
// zoomed timeline around each invalid verdict's proof (so that it is seen
// without scrolling), the run's timeline, acquire latency and rate plots,
// and the proofs in full. Time runs left to right; faults are bands in one
// lane per fault kind, each named; each client process has a lane (packed
// one after another in the full timeline), each operation is a bar from its
// invoke to its completion (green ok, grey fail, orange info), a hold is a
// blue band. Events that prove an invalid verdict are outlined in black and
// every mutex overlap is framed in red. Marks closer than a few pixels
// merge, so a 5-minute run stays a few hundred kilobytes.
//
// WriteDir also writes register.html for a register run: porcupine's
// visualization of the register with the faults as annotations.
package report
