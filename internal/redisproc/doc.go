// Package redisproc starts and stops one redis-server process on loopback,
// for the test clusters (cluster/clustertest) and the fault suite's local
// backend (jepsen-like/backend/local): one start-up rule for both.
//
// A server counts as started once its own log, read from where it ended
// before the start, says it accepts connections and the port answers a PING
// (freeport.RedisLog: another process that took the port between the probe
// and the bind would answer the PING while this one exits). The process dies
// with the program that started it (Pdeathsig), so a test binary killed
// without its cleanups leaves no server behind.
package redisproc
