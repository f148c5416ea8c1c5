-- Refresh of an Atomic permit on one master, run atomically. Never re-adds.
-- KEYS[1] the holders ZSET, KEYS[2] the tokens HASH
-- ARGV[1] the permit's id, ARGV[2] the timeout in ms
-- Returns 1 when the permit was live and is now scored with the server's
-- time, 0 when it had timed out or been removed (it is removed).
if redis.replicate_commands then pcall(redis.replicate_commands) end
local function int(n) return string.format('%d', n) end -- tostring writes 10^14 as 1e+14
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
if not s then
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 0
end
if tonumber(s) <= now - tonumber(ARGV[2]) then
  redis.call('ZREM', KEYS[1], ARGV[1])
  redis.call('HDEL', KEYS[2], ARGV[1])
  return 0
end
redis.call('ZADD', KEYS[1], int(now), ARGV[1])
return 1
