// Package pauseproxy is a TCP proxy that can be paused: while paused it
// still accepts connections and reads what clients send, but forwards
// nothing in either direction, as a SIGSTOPped redis-server behaves. On
// Resume everything held back flows on, in order. The embedded demo uses it
// to pause in-process masters; it only ever listens on 127.0.0.1.
package pauseproxy
