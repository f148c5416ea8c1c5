-- Round 1 of an acquisition, run atomically on one master.
-- KEYS[1] the lock key, KEYS[2] its fencing counter, KEYS[3] the master's epoch marker
-- ARGV[1] the lease's random value, ARGV[2] the TTL in milliseconds,
-- ARGV[3] a proposed token (decimal, below 2^53), or '0' for none,
-- ARGV[4] the value of a lease of this client that was just released, or ''
-- (its delete may still be on its way here: the key counts as free),
-- ARGV[5] the key's release channel
-- When the SET is granted and the counter is below the proposal, the counter
-- is raised to it in the same step (the one-round fast path, docs/fencing.md).
-- Returns {granted (1 or 0), the counter before any raise as a decimal string,
-- the epoch marker or '', raised (1 or 0), and when refused the number of
-- subscribers to the key's release channel (one per waiting client; -1 when
-- the user may not ask), else 0}.
local granted = 0
if redis.call('SET', KEYS[1], ARGV[1], 'NX', 'PX', ARGV[2]) then
  granted = 1
else
  local current = redis.call('GET', KEYS[1])
  if current == ARGV[1] then
    granted = 1 -- our own SET, sent again after a lost reply
  elseif ARGV[4] ~= '' and current == ARGV[4] then
    redis.call('SET', KEYS[1], ARGV[1], 'PX', ARGV[2]) -- our own released lease's key
    granted = 1
  end
end
local counter = redis.call('GET', KEYS[2]) or '0'
local raised = 0
local proposal = tonumber(ARGV[3])
if granted == 1 and proposal > 0 and tonumber(counter) < proposal then
  redis.call('SET', KEYS[2], ARGV[3])
  raised = 1
end
local waiting = 0
if granted == 0 then
  -- pcall: a user without +pubsub|numsub still gets its refusal; -1 means unknown
  local n = redis.pcall('PUBSUB', 'NUMSUB', ARGV[5])
  if type(n) == 'table' and n.err == nil then
    waiting = n[2]
  else
    waiting = -1
  end
end
return {granted, counter, redis.call('GET', KEYS[3]) or '', raised, waiting}
