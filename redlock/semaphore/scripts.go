package semaphore

import (
	_ "embed"

	"github.com/redis/go-redis/v9"
)

// The Lua scripts of the Atomic variant, and the limit check of the others.
// go-redis sends EVALSHA and falls back to EVAL when a master does not have
// a script cached.
var (
	//go:embed scripts/acquire.lua
	acquireSrc string
	//go:embed scripts/refresh.lua
	refreshSrc string
	//go:embed scripts/release.lua
	releaseSrc string
	//go:embed scripts/holders.lua
	holdersSrc string
	//go:embed scripts/free.lua
	freeSrc string
	//go:embed scripts/limit.lua
	limitSrc string // sent as EVAL inside a MULTI, where EVALSHA could not fall back

	acquireScript = redis.NewScript(acquireSrc)
	refreshScript = redis.NewScript(refreshSrc)
	releaseScript = redis.NewScript(releaseSrc)
	holdersScript = redis.NewScript(holdersSrc)
	freeScript    = redis.NewScript(freeSrc)
)
