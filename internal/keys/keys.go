package keys

import (
	"hash/fnv"
	"strconv"
)

// The keys and channels quorumlock uses on a master.
const (
	Prefix            = "quorumlock:"
	ChannelPrefix     = Prefix + "released:"
	BucketPrefix      = Prefix + "tokens:"
	LegacyFencePrefix = Prefix + "fence:"
	Cert              = Prefix + "cert"
	Incarnation       = Prefix + "incarnation"
	Scratch           = Prefix + "scratch"
	Lambda            = Prefix + "lambda"
	Floor             = Prefix + "floor"
	FenceBuckets      = Prefix + "fencebuckets"
	SyncPrefix        = Prefix + "sync:"
	OldEpoch          = Prefix + "epoch"
	OldSynced         = Prefix + "synced"
)

// Bucket names fencing counter n.
func Bucket(n int) string { return BucketPrefix + strconv.Itoa(n) }

// BucketOf is the counter that issues key's tokens among b counters: FNV-1a
// (32 bits) of the key's bytes, modulo b. Every client of a key must use the
// same b (the masters record it at FenceBuckets, and a client with another b
// is refused).
func BucketOf(key string, b int) int {
	h := fnv.New32a()
	_, _ = h.Write([]byte(key))
	return int(h.Sum32() % uint32(b))
}

// Legacy is the per-key counter earlier versions kept for key.
func Legacy(key string) string { return LegacyFencePrefix + key }
