// Package restart holds the rules that keep the default quorum (a majority)
// safe when masters restart, lose data or fail over, in one place
// (docs/safety.md, "The rule index"):
//
//   - rule V, whether a master's answer counts, is probe.Counts, applied to
//     the certificate an acquire read and the lineage an INFO sent after it
//     on the same connection reports (redlock's batcher sends both);
//   - rule S, certifying a cluster from scratch: Scratch;
//   - rule SC, completing a scratch certification: Complete;
//   - rule Y, raising a master's counters from the others and certifying
//     it: Sync (rule Q, when a sync may start, is the caller's clock);
//   - rule R, the operator's repair: Repair.
//
// The functions talk to one master at a time through go-redis clients and
// keep no state: the redlock Client decides when to call them.
package restart
