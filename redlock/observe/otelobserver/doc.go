// Package otelobserver is a redlock.Observer that records an OpenTelemetry
// span (go.opentelemetry.io/otel) per lock operation: "redlock.acquire",
// "redlock.extend", "redlock.release", "redlock.lost" and
// "redlock.quarantine", a child of the span in the operation's context,
// timed from the operation's start to its end, with one span event per
// master ("redlock.master": its index, address, result and latency) and the
// outcome, quorum and fencing token as attributes. The lock key is an
// attribute ("redlock.key") unless WithoutKeys is given; the lock value
// never is.
package otelobserver
