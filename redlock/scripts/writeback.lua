-- Round 2 of an acquisition: raise the key's bucket counter to the lease's
-- token, only where the lease still owns the lock key. Run atomically on one
-- master.
-- KEYS[1] the lock key, KEYS[2] its bucket's fencing counter, KEYS[3] the
-- master's certificate, KEYS[4] its incarnation
-- ARGV[1] the lease's value, ARGV[2] the token (decimal, below 2^53)
-- Returns {1, token, cert, inc} when raised, {0, counter, cert, inc} when the
-- counter already is at or above the token, {-1, counter, cert, inc} when the
-- lease does not own the key here (cert and inc are the certificate and the
-- incarnation, or '').
local counter = redis.call('GET', KEYS[2]) or '0'
local cert = redis.call('GET', KEYS[3]) or ''
local inc = redis.call('GET', KEYS[4]) or ''
if redis.call('GET', KEYS[1]) ~= ARGV[1] then
  return {-1, counter, cert, inc}
end
if tonumber(counter) >= tonumber(ARGV[2]) then
  return {0, counter, cert, inc}
end
redis.call('SET', KEYS[2], ARGV[2])
return {1, ARGV[2], cert, inc}
