-- Owner-checked release of one or more keys, run atomically on one master;
-- wakes the waiters of every key it deletes. The batcher sends neighbouring
-- releases as one call (redlock/merge.go).
-- KEYS the lock keys; ARGV[1] the release channel prefix (the channel of key
-- K is prefix..K), or '' to publish nothing; ARGV[1 + i] the value expected
-- at KEYS[i].
-- Returns, per key, 1 when it was that value's and is now deleted, 0 when the
-- key is not there, -1 when it belongs to another value; or that key's error
-- alone (a key of another type, say), which leaves the other keys' replies
-- as they would be on their own.
local prefix = ARGV[1]

local function release(key, value)
  local v = redis.call('GET', key)
  if v == value then
    redis.call('DEL', key)
    if prefix ~= '' then
      redis.call('PUBLISH', prefix .. key, '1')
    end
    return 1
  elseif v then
    return -1
  end
  return 0
end

-- failed is the error reply of a key whose release raised e: a command's
-- error as the command gave it (WRONGTYPE ...), anything else under ERR.
local function failed(e)
  if type(e) == 'table' and e.err then
    e = e.err
  end
  e = tostring(e)
  if not string.find(e, '^%u+ ') then
    e = 'ERR ' .. e
  end
  return redis.error_reply(e)
end

local out = {}
for i, key in ipairs(KEYS) do
  local ok, r = pcall(release, key, ARGV[1 + i])
  if ok then
    out[i] = r
  else
    out[i] = failed(r)
  end
end
return out
