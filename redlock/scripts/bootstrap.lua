-- Marks a master of a fresh cluster (no master carried a marker), run
-- atomically on it. Sets the epoch marker and the synced run_id, unless a
-- marker is there already (another client's bootstrap came first).
-- KEYS[1] the epoch marker, KEYS[2] the synced run_id
-- ARGV[1] a fresh marker value, ARGV[2] the master's run_id as probed
-- Returns the marker now in place.
if redis.call('SET', KEYS[1], ARGV[1], 'NX') then
  redis.call('SET', KEYS[2], ARGV[2])
end
return redis.call('GET', KEYS[1])
