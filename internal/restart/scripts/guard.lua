-- Writes a certification's guard, atomically, only while the master is
-- still in the lineage the certification read (a loss since would make the
-- guard a lie: a late write must not recreate a guard on a master that lost
-- its data after it was read).
-- KEYS[1] the incarnation, KEYS[2] the guard
-- ARGV[1] the lineage read, "run_id replid incarnation"; ARGV[2] the guard's
-- value; ARGV[3] its TTL in ms, or '0' for none; ARGV[4] 'NX' to keep a
-- guard already there, else ''.
-- Returns {1, guard} when written or already there, {0, why} when refused.
local l, role = lineage()
if role ~= 'master' then
  return {0, 'not a master'}
end
if l ~= ARGV[1] then
  return {0, 'the lineage changed since it was read (a restart, failback, promotion or flush)'}
end
local args = {'SET', KEYS[2], ARGV[2]}
if ARGV[3] ~= '0' then
  args[#args + 1] = 'PX'
  args[#args + 1] = ARGV[3]
end
if ARGV[4] == 'NX' then
  args[#args + 1] = 'NX'
end
redis.call(unpack(args))
return {1, redis.call('GET', KEYS[2])}
