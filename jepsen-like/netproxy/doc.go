// Package netproxy is the per-client TCP proxy of the jepsen-like suite:
// every workload client reaches every master through its own Proxy, so the
// nemesis can cut one client off from some masters (a partition that hangs
// rather than refuses: bytes are swallowed, like an iptables DROP), delay a
// master's answers to one client while its commands are applied on time
// (slow-replies), or move a master to a new address (a failover, a
// container restarted on a new port) without the client noticing.
//
// It can also pause a link (SetPaused): bytes are held both ways and
// delivered in order on resume, as with a SIGSTOPped server. redlockctl's
// demo pauses its in-process masters that way. It only ever listens on
// 127.0.0.1.
package netproxy
