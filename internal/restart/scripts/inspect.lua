-- A master's restart state, read atomically (internal/restart, Inspect).
-- KEYS[1] the certificate, KEYS[2] the scratch guard, KEYS[3] and KEYS[4]
-- the markers of earlier versions, KEYS[5] the token floor, KEYS[6] the
-- lambda set, KEYS[7] the fence-bucket count the clients use.
-- ARGV[1] how many bucket counters to read (0: none), ARGV[2] their prefix.
-- Returns {run_id, master_replid, role, cert, scratch, old epoch, old synced,
-- floor, fence buckets, server time in ms, {ttl, expiry, ...} of the lambda
-- set, {bucket, counter, ...} of the buckets present}; absent keys are ''.
local info = redis.call('INFO', 'server', 'replication')
local function field(name)
  local s = string.find(info, '\n' .. name, 1, true)
  if not s then return '' end
  local b = s + 1 + #name
  local e = string.find(info, '\r', b, true) or (#info + 1)
  return string.sub(info, b, e - 1)
end
local function get(k) return redis.call('GET', k) or '' end
local t = redis.call('TIME')
local now = string.format('%d', t[1] * 1000 + math.floor(t[2] / 1000))
local buckets = {}
for i = 0, tonumber(ARGV[1]) - 1 do
  local v = redis.call('GET', ARGV[2] .. i)
  if v then
    buckets[#buckets + 1] = tostring(i)
    buckets[#buckets + 1] = v
  end
end
return {field('run_id:'), field('master_replid:'), field('role:'),
  get(KEYS[1]), get(KEYS[2]), get(KEYS[3]), get(KEYS[4]), get(KEYS[5]), get(KEYS[7]), now,
  redis.call('ZRANGE', KEYS[6], 0, -1, 'WITHSCORES'), buckets}
