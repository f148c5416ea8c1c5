-- Raise a fencing counter to at least ARGV[1] (used when a restarted master
-- rejoins). Never lowers it. KEYS[1] the counter. Returns the counter.
local counter = redis.call('GET', KEYS[1]) or '0'
if tonumber(counter) < tonumber(ARGV[1]) then
  redis.call('SET', KEYS[1], ARGV[1])
  return ARGV[1]
end
return counter
