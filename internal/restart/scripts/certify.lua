-- Certifies a master (rules S, SC, Y and R of docs/safety.md), atomically:
-- only if the guard written before the counters were raised is still there,
-- unchanged, and names the master's current lineage (a FLUSHALL deletes the
-- guard; a restart, failback or promotion changes the lineage), and the
-- master answers as a master.
-- KEYS[1] the certificate, KEYS[2] the guard
-- ARGV[1] the guard's value, "run_id replid ..."; ARGV[2] the certificate's
-- origin; ARGV[3] '1' to delete the guard once certified (a sync's), else '0'.
-- Returns {1, cert} when certified now, {2, cert} when the master already had
-- a certificate naming its lineage, {0, why} when refused.
local info = redis.call('INFO', 'server', 'replication')
local function field(name)
  local s = string.find(info, '\n' .. name, 1, true)
  if not s then return '' end
  local b = s + 1 + #name
  local e = string.find(info, '\r', b, true) or (#info + 1)
  return string.sub(info, b, e - 1)
end
local lineage = field('run_id:') .. ' ' .. field('master_replid:')
if field('role:') ~= 'master' then
  return {0, 'not a master'}
end
local cert = redis.call('GET', KEYS[1])
if cert and string.sub(cert, 1, #lineage + 1) == lineage .. ' ' then
  if ARGV[3] == '1' then
    redis.call('DEL', KEYS[2])
  end
  return {2, cert}
end
if redis.call('GET', KEYS[2]) ~= ARGV[1] then
  return {0, 'the guard is gone or changed (the master lost its data, or another certification came first)'}
end
if string.sub(ARGV[1], 1, #lineage + 1) ~= lineage .. ' ' then
  return {0, 'the lineage changed since the guard was written (a restart, failback or promotion)'}
end
cert = lineage .. ' ' .. ARGV[2]
redis.call('SET', KEYS[1], cert)
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[2])
end
return {1, cert}
