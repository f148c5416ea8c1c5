-- Certifies a master (rules S, SC, Y and R of docs/safety.md), atomically:
-- only if the guard written before the counters were raised is still there,
-- unchanged, and names the master's current lineage (a FLUSHALL deletes the
-- guard and the incarnation; a restart, failback or promotion changes the
-- lineage), and the master answers as a master.
-- KEYS[1] the incarnation, KEYS[2] the certificate, KEYS[3] the guard
-- ARGV[1] the guard's value, "run_id replid incarnation ..."; ARGV[2] the
-- certificate's origin; ARGV[3] '1' to delete the guard once certified (a
-- sync's), else '0'.
-- Returns {1, cert} when certified now, {2, cert} when the master already had
-- a certificate naming its lineage, {0, why} when refused.
local l, role = lineage()
if role ~= 'master' then
  return {0, 'not a master'}
end
local cert = redis.call('GET', KEYS[2])
if cert and string.sub(cert, 1, #l + 1) == l .. ' ' then
  if ARGV[3] == '1' then
    redis.call('DEL', KEYS[3])
  end
  return {2, cert}
end
if redis.call('GET', KEYS[3]) ~= ARGV[1] then
  return {0, 'the guard is gone or changed (the master lost its data, or another certification came first)'}
end
if string.sub(ARGV[1], 1, #l + 1) ~= l .. ' ' then
  return {0, 'the lineage changed since the guard was written (a restart, failback, promotion or flush)'}
end
cert = l .. ' ' .. ARGV[2]
redis.call('SET', KEYS[2], cert)
if ARGV[3] == '1' then
  redis.call('DEL', KEYS[3])
end
return {1, cert}
