// Package promobserver is a redlock.Observer that exports Prometheus
// metrics (github.com/prometheus/client_golang):
//
//	quorumlock_redlock_operations_total{op,outcome}            counter
//	quorumlock_redlock_operation_duration_seconds{op,outcome}  histogram
//	quorumlock_redlock_master_results_total{op,master,result}  counter
//	quorumlock_redlock_lock_attempts{outcome}                   histogram (quorum rounds per acquire)
//
// op is acquire, extend, release, lost or quarantine; outcome one of
// redlock's Outcome values; master the master's index (at most
// at most 9 values); result a redlock.MasterResult Kind. Every label
// has a small fixed set of values: key names are not labels unless
// WithKeyLabel maps them to a bounded set of classes.
package promobserver
