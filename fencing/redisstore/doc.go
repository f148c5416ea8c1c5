// Package redisstore is a fencing.Store kept in Redis.
//
// Each resource is one Redis hash at key Prefix+resource (the default prefix
// is DefaultPrefix, "quorumlock:fenced:") with the fields
//
//	highest  the highest accepted token, in decimal
//	holder   the holder that presented it
//	value    the value last written (absent until the first write)
//
// Write and Read are each one Lua script (write.lua, read.lua), so the check
// of the accept rule and its effect are atomic in Redis. Scripts touch one key
// only, so the store works with a Redis Cluster client too. Tokens are below
// 2^53 (fencing.MaxToken), so the doubles Lua compares them as are exact.
//
// The store is only as durable as the Redis server behind it: a server that
// loses its data (no persistence, a failover to a lagging replica) forgets the
// highest tokens, and a stale holder may then write. Use appendonly yes with
// appendfsync always for a resource that must never go back.
package redisstore
