// Package backend defines the masters a jepsen-like run works on and the
// faults they support. Two implementations: backend/local (redis-server
// processes on loopback) and backend/docker (containers under
// testcontainers-go). Every process or container a backend starts is
// stopped by its id in Close, also when the run failed.
package backend
