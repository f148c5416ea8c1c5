-- Owner-checked release of one or more keys, run atomically on one master;
-- wakes the waiters of every key it deletes.
-- KEYS the lock keys; ARGV[i] the value expected at KEYS[i]; the last ARGV is
-- the release channel prefix (the channel of key K is prefix..K), or '' to
-- publish nothing.
-- Returns, per key, 1 when it was that value's and is now deleted, 0 when the
-- key is not there, -1 when it belongs to another value.
local prefix = ARGV[#KEYS + 1]
local out = {}
for i, key in ipairs(KEYS) do
  local v = redis.call('GET', key)
  if v == ARGV[i] then
    redis.call('DEL', key)
    if prefix ~= '' then
      redis.call('PUBLISH', prefix .. key, '1')
    end
    out[i] = 1
  elseif v then
    out[i] = -1
  else
    out[i] = 0
  end
end
return out
