-- The last step of raising a rejoining master's counters, run atomically on
-- it: set the epoch marker and record the run_id whose counters are now
-- complete, but only if the guard key set before the raise is still there
-- (otherwise the master restarted meanwhile and lost what was raised).
-- KEYS[1] the guard, KEYS[2] the epoch marker, KEYS[3] the synced run_id
-- ARGV[1] a fresh marker value, ARGV[2] the run_id probed before the sync
-- Returns the marker now in place, or nil when the guard is gone.
if redis.call('EXISTS', KEYS[1]) == 0 then
  return false
end
redis.call('DEL', KEYS[1])
redis.call('SET', KEYS[2], ARGV[1], 'NX')
redis.call('SET', KEYS[3], ARGV[2])
return redis.call('GET', KEYS[2])
