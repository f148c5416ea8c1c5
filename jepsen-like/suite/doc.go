// Package suite runs one jepsen-like test: it starts the backend's masters,
// one TCP proxy per client slot and master, the client processes of the
// workload and the nemesis of a seeded schedule; then it heals everything,
// stops what it started, runs the checkers on the history and writes
// history.jsonl, results.json and report.html into the output directory.
package suite
