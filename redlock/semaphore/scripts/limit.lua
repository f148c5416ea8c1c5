-- The limit check of a one-master semaphore, run in the same atomic step as
-- the acquisition: Basic, Fair and Guarded send it as EVAL inside their
-- MULTI, after removing timed-out entries; acquire.lua has the same lines.
-- KEYS[1] the holders ZSET, KEYS[2] the limit key; ARGV[1] the caller's limit
-- Returns the limit the holders use: ARGV[1] when it stands (recorded now if
-- none was, or if nobody holds a permit), else the one recorded.
local stored = redis.call('GET', KEYS[2])
if stored == ARGV[1] then
  return stored
end
if stored and redis.call('ZCARD', KEYS[1]) > 0 then
  return stored
end
redis.call('SET', KEYS[2], ARGV[1])
return ARGV[1]
