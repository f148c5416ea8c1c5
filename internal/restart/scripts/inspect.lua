-- A master's restart state, read atomically (internal/restart, Inspect).
-- KEYS[1] the incarnation, KEYS[2] the certificate, KEYS[3] the scratch
-- guard, KEYS[4] and KEYS[5] the markers of earlier versions, KEYS[6] the
-- token floor, KEYS[7] the lambda set, KEYS[8] the fence-bucket count.
-- ARGV[1] how many bucket counters to read (0: none), ARGV[2] their prefix,
-- ARGV[3] a fresh random incarnation, set if the master (a master, not a
-- replica) has none: a FLUSHALL deleted it, or none was ever made.
-- Returns {lineage "run_id replid incarnation", role, cert, scratch, old
-- epoch, old synced, floor, fence buckets, server time in ms, {ttl, expiry,
-- ...} of the lambda set, {bucket, counter, ...} of the buckets present};
-- absent keys are ''.
local role0 = string.match(redis.call('INFO', 'replication'), 'role:(%a+)')
if role0 == 'master' then
  redis.call('SET', KEYS[1], ARGV[3], 'NX')
end
local l, role = lineage()
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
return {l, role, get(KEYS[2]), get(KEYS[3]), get(KEYS[4]), get(KEYS[5]), get(KEYS[6]), get(KEYS[8]), now,
  redis.call('ZRANGE', KEYS[7], 0, -1, 'WITHSCORES'), buckets}
