package redlock

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts each master runs. go-redis sends EVALSHA and falls back to
// EVAL when a master does not have a script cached (after a restart).
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/writeback.lua
	writeBackSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/extend.lua
	extendSrc string
	//go:embed scripts/raise.lua
	raiseSrc string
	//go:embed scripts/finishsync.lua
	finishSyncSrc string
	//go:embed scripts/bootstrap.lua
	bootstrapSrc string

	acquireScript    = redis.NewScript(acquireSrc)
	writeBackScript  = redis.NewScript(writeBackSrc)
	releaseScript    = redis.NewScript(releaseSrc)
	extendScript     = redis.NewScript(extendSrc)
	raiseScript      = redis.NewScript(raiseSrc)
	finishSyncScript = redis.NewScript(finishSyncSrc)
	bootstrapScript  = redis.NewScript(bootstrapSrc)
)

// Key layout. A lock key K is stored as K itself (holding the lease's random
// value, with a PX TTL); its fencing counter lives at FencePrefix+K and never
// expires; releases are published on ChannelPrefix+K; every master carries one
// EpochKey that tells a client whether the master lost its data, and one
// SyncedKey naming the run_id under which its counters were last complete.
const (
	// Prefix is reserved: lock keys may not start with it.
	Prefix        = "quorumlock:"
	FencePrefix   = Prefix + "fence:"
	ChannelPrefix = Prefix + "released:"
	EpochKey      = Prefix + "epoch"
	SyncedKey     = Prefix + "synced"
	// SyncPrefix names the short-lived guard of a counter sync (see
	// docs/design.md); it expires by itself.
	SyncPrefix = Prefix + "sync:"
)
