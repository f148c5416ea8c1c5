-- Release of an Atomic permit on one master, run atomically; wakes waiters.
-- KEYS[1] the holders ZSET, KEYS[2] the tokens HASH
-- ARGV[1] the permit's id, ARGV[2] the timeout in ms, ARGV[3] the channel
-- Returns 1 when the permit was live, 0 when it had timed out or been removed.
if redis.replicate_commands then pcall(redis.replicate_commands) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local s = redis.call('ZSCORE', KEYS[1], ARGV[1])
redis.call('HDEL', KEYS[2], ARGV[1])
if not s then
  return 0
end
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('PUBLISH', ARGV[3], '1')
if tonumber(s) <= now - tonumber(ARGV[2]) then
  return 0
end
return 1
