-- The survey of a multi-master semaphore, on one master: the limit its
-- holders use, and which slot keys are absent here.
-- KEYS[1..n] the slot keys, in slot order; KEYS[n+1] the limit key
-- ARGV[1] the caller's limit: recorded when this master has none. A limit
-- once recorded is never changed here (no master alone knows whether a
-- slot is held elsewhere); the caller counts the masters that agree.
-- Returns {limit recorded, indexes (0-based) of the absent slot keys...}.
local n = #KEYS - 1
local stored = redis.call('GET', KEYS[n + 1])
if not stored then
  redis.call('SET', KEYS[n + 1], ARGV[1])
  stored = ARGV[1]
end
local out = {stored}
for i = 1, n do
  if redis.call('EXISTS', KEYS[i]) == 0 then
    out[#out + 1] = i - 1
  end
end
return out
