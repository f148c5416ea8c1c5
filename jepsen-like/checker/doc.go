// Package checker decides whether a history (package history) is correct.
//
// Each Checker returns a Result: valid, invalid or unknown, an explanation,
// and the events that prove an invalid verdict. The checkers are:
//
//   - mutex: no two processes held a key at once. A hold runs from the
//     acquire's ok to the earlier of its release's invoke and its
//     valid_until_ns.
//   - tokens: of two holds of a key that did not overlap, the later one's
//     token is strictly greater.
//   - fenced-register: the fenced store never accepted a write whose token
//     was below one it had already accepted, and the register is
//     linearizable (checked with github.com/anishathalye/porcupine).
//   - semaphore: never more than limit holders of a semaphore at once.
//
// A checker with nothing to check (e.g. semaphore on a lock history) says
// valid and says why. Every checker works on hand-written histories.
package checker
