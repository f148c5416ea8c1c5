-- Round 2 of an acquisition: raise the fencing counter to the lease's token,
-- only where the lease still owns the lock key. Run atomically on one master.
-- KEYS[1] the lock key, KEYS[2] its fencing counter
-- ARGV[1] the lease's value, ARGV[2] the token (decimal, below 2^53)
-- Returns {1, token} when raised, {0, counter} when the counter already is at
-- or above the token, {-1, counter} when the lease does not own the key here.
local counter = redis.call('GET', KEYS[2]) or '0'
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1, counter}
end
if tonumber(counter) >= tonumber(ARGV[2]) then
  return {0, counter}
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, ARGV[2]}
