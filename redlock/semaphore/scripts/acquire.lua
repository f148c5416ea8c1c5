-- One attempt of the Atomic semaphore on one master, run atomically.
-- KEYS[1] the holders ZSET (member -> server time in ms), KEYS[2] the tokens
-- HASH (member -> fencing token), KEYS[3] the fencing counter, KEYS[4] the
-- limit key
-- ARGV[1] the permit's id, ARGV[2] the limit, ARGV[3] the timeout in ms,
-- ARGV[4] the greatest token (2^53 - 1)
-- Returns {1, token} when the permit is held, {0, holders} when full,
-- {-1, limit} when the holders use another limit (see limit.lua),
-- {-2, counter} when the counter is at the greatest token (nothing changed).
-- Numbers become strings through int: Lua's tostring (and ..) write 10^14
-- as 1e+14.
if redis.replicate_commands then pcall(redis.replicate_commands) end -- Redis < 5
local function int(n) return string.format('%d', n) end
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
local cutoff = int(now - tonumber(ARGV[3]))
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
local limit = redis.call('GET', KEYS[4])
if limit ~= ARGV[2] then
  if limit and n > 0 then
    return {-1, limit}
  end
  redis.call('SET', KEYS[4], ARGV[2])
end
if n >= tonumber(ARGV[2]) then
  return {0, int(n)}
end
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if not last then
  return redis.error_reply('fencing counter ' .. KEYS[3] .. ' does not hold an integer')
end
if last >= tonumber(ARGV[4]) then
  return {-2, int(last)}
end
redis.call('ZADD', KEYS[1], int(now), ARGV[1])
local token = int(redis.call('INCR', KEYS[3]))
redis.call('HSET', KEYS[2], ARGV[1], token)
return {1, token}
