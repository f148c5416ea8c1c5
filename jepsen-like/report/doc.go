// Package report writes report.html: a self-contained page (inline SVG and
// CSS, no script, no external asset) with the checkers' verdicts and a
// timeline of a run. Time runs left to right; each client process has a
// lane, each operation is a bar from its invoke to its completion (green
// ok, grey fail, orange info), a hold is a blue band from the acquire's ok
// to the end of the hold, and faults are red bands in the nemesis lane at
// the top. Events that prove an invalid verdict are outlined in black; every
// bar has a tooltip with its events.
package report
