// Package history is the record of a jepsen-like run: one Event per line of
// JSON (history.jsonl), with the field names docs/jepsen-like.md fixes.
//
// A client operation is two events of one process: an "invoke" and its
// completion, "ok" (it happened), "fail" (it definitely did not happen) or
// "info" (unknown). Nemesis events are single "info" events of process -1
// whose value says which fault started or stopped. Times are nanoseconds on
// the run's monotonic clock, counted from the start of the run.
//
// Decode parses and validates a history, hand-written or recorded; a Recorder
// assigns indices and times while a run is going.
package history
