// Package local is the jepsen-like backend of real redis-server processes on
// 127.0.0.1, each in its own temporary directory, started with argv[0]
// "redis-server" (Debian's binary picks its mode from it). Processes are
// stopped by PID in Close, and die with the suite (Pdeathsig) if it is
// killed. A master's wall clock can be shifted through an LD_PRELOAD shim
// (package nemesis/clockshim) when the backend is given its path.
package local
