-- Owner-checked extension, run atomically on one master. Never creates a key.
-- KEYS[1] the lock key, KEYS[2] the lambda set; ARGV[1] the lease's value,
-- ARGV[2] the new TTL in ms
-- Returns 1 when the key was ours and now lives ARGV[2] ms (the lambda set
-- then learns that a lease of this TTL lives until now + TTL at least), 0
-- when the key is not there, -1 when it belongs to another value.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  local t = redis.call('TIME')
  redis.call('ZADD', KEYS[2], 'GT', string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000) + tonumber(ARGV[2])), ARGV[2])
  return 1
elseif v then
  return -1
end
return 0
