-- Round 1 of an acquisition, run atomically on one master.
-- KEYS[1] the lock key, KEYS[2] its fencing counter, KEYS[3] the master's epoch marker
-- ARGV[1] the lease's random value, ARGV[2] the TTL in milliseconds
-- Returns {granted (1 or 0), the counter as a decimal string, the epoch marker or ''}.
local granted = 0
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  granted = 1
elseif redis.call('GET', KEYS[1]) == ARGV[1] then
  granted = 1 -- our own SET, sent again after a lost reply
end
return {granted, redis.call('GET', KEYS[2]) or '0', redis.call('GET', KEYS[3]) or ''}
