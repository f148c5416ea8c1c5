-- One attempt of the Atomic semaphore on one master, run atomically.
-- KEYS[1] the holders ZSET (member -> server time in ms), KEYS[2] the tokens
-- HASH (member -> fencing token), KEYS[3] the fencing counter
-- ARGV[1] the permit's id, ARGV[2] the limit, ARGV[3] the timeout in ms
-- Returns {1, token} when the permit is held, {0, holders} when full.
if redis.replicate_commands then pcall(redis.replicate_commands) end -- Redis < 5
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = now - tonumber(ARGV[3])
local expired = redis.call('ZRANGEBYSCORE', KEYS[1], '-inf', cutoff)
for _, m in ipairs(expired) do
  redis.call('HDEL', KEYS[2], m)
end
if #expired > 0 then
  redis.call('ZREMRANGEBYSCORE', KEYS[1], '-inf', cutoff)
end
if redis.call('ZSCORE', KEYS[1], ARGV[1]) then
  -- our own attempt, sent again after a lost reply
  return {1, redis.call('HGET', KEYS[2], ARGV[1]) or '0'}
end
local n = redis.call('ZCARD', KEYS[1])
if n >= tonumber(ARGV[2]) then
  return {0, tostring(n)}
end
redis.call('ZADD', KEYS[1], now, ARGV[1])
local token = redis.call('INCR', KEYS[3])
redis.call('HSET', KEYS[2], ARGV[1], token)
return {1, tostring(token)}
