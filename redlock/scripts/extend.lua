-- Owner-checked extension, run atomically on one master. Never creates a key.
-- KEYS[1] the lock key; ARGV[1] the lease's value, ARGV[2] the new TTL in ms
-- Returns 1 when the key was ours and now lives ARGV[2] ms, 0 when the key is
-- not there, -1 when it belongs to another value.
local v = redis.call('GET', KEYS[1])
if v == ARGV[1] then
  redis.call('PEXPIRE', KEYS[1], ARGV[2])
  return 1
elseif v then
  return -1
end
return 0
