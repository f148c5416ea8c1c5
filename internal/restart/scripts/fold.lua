-- Folds per-key fencing counters of an earlier version into their bucket
-- counters and deletes them, atomically on one master.
-- KEYS[1] the fence-bucket count the masters' clients use; then pairs
-- KEYS[2i], KEYS[2i+1]: a per-key counter and its key's bucket counter.
-- ARGV[1] the bucket count the pairs were computed with.
-- A lock reads the largest of its bucket counter, its per-key counter and
-- the floor, on each master: raising the bucket to the per-key counter
-- before deleting it leaves every such read at least what it was, so the
-- fold is safe on any master at any time, with no quorum.
-- Returns the number of per-key counters folded; an error reply, changing
-- nothing, when the masters record another bucket count.
local b = redis.call('GET', KEYS[1])
if not b then
  redis.call('SET', KEYS[1], ARGV[1])
elseif b ~= ARGV[1] then
  return redis.error_reply('QLBUCKETS the masters use ' .. b .. ' fence buckets, the fold ' .. ARGV[1])
end
local folded = 0
for i = 2, #KEYS - 1, 2 do
  local v = redis.call('GET', KEYS[i])
  if v then
    local c = redis.call('GET', KEYS[i + 1])
    if not c or tonumber(v) > tonumber(c) then
      redis.call('SET', KEYS[i + 1], v)
    end
    redis.call('DEL', KEYS[i])
    folded = folded + 1
  end
end
return folded
