-- The last step of raising a rejoining master's counters, run atomically on
-- it: set the epoch marker, but only if the guard key set before the raise is
-- still there (otherwise the master restarted meanwhile and lost the raise).
-- KEYS[1] the guard, KEYS[2] the epoch marker; ARGV[1] a fresh marker value.
-- Returns the marker now in place, or nil when the guard is gone.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'NX')
return redis.call('GET', KEYS[2])
