// Package keys is the key layout quorumlock keeps on every master, in one
// place for the library, redlockctl and the tests (docs/design.md, "Key
// layout").
//
// For a lock key K: K itself holds the lease's random value (PX = the TTL);
// releases are published on ChannelPrefix+K; K's fencing token comes from
// the bucket counter Bucket(BucketOf(K, B)), one of B counters that only
// grow and never expire. Pre-bucket clients kept one counter per key at
// LegacyFencePrefix+K: it is still read, never written. Per master, one
// each: Incarnation (a random name of the master's dataset, made again after
// a FLUSHALL), Cert (the master's certificate), Scratch (the guard of a scratch
// certification), Lambda (the longest TTL in use, with when it ends), Floor
// (the token floor a repair raises), FenceBuckets (the B the masters' clients
// use); and SyncPrefix+nonce, the short-lived guard of a counter sync.
// OldEpoch and OldSynced are the restart markers of earlier versions, read
// only as "this master has records".
//
// Everything under Prefix is reserved: lock keys may not start with it.
package keys
