package redlock

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts each master runs (internal/keys has the key layout; the
// restart rules' scripts are internal/restart's). The batcher sends EVALSHA
// and falls back to EVAL when a master does not have a script cached (after
// a restart).
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/acquire_many.lua
	acquireManySrc string
	//go:embed scripts/writeback.lua
	writeBackSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/extend.lua
	extendSrc string

	acquireScript     = redis.NewScript(acquireSrc)
	acquireManyScript = redis.NewScript(acquireManySrc)
	writeBackScript   = redis.NewScript(writeBackSrc)
	releaseScript     = redis.NewScript(releaseSrc)
	extendScript      = redis.NewScript(extendSrc)
)
