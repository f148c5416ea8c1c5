// Package freeport finds a free TCP port on 127.0.0.1 for the servers that
// tests start (redis-server, PostgreSQL).
package freeport
