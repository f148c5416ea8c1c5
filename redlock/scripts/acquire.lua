-- Round 1 of an acquisition, run atomically on one master.
-- KEYS[1] the lock key, KEYS[2] its bucket's fencing counter, KEYS[3] its
-- per-key counter of an earlier version (read, never written), KEYS[4] the
-- token floor, KEYS[5] the master's certificate, KEYS[6] the lambda set,
-- KEYS[7] the fence-bucket count the masters' clients use, KEYS[8] the
-- master's incarnation.
-- ARGV[1] the lease's random value, ARGV[2] the TTL in milliseconds,
-- ARGV[3] a proposed token (decimal, below 2^53), or '0' for none,
-- ARGV[4] the value of a lease of this client that was just released, or ''
-- (its delete may still be on its way here: the key counts as free),
-- ARGV[5] the key's release channel, ARGV[6] the client's fence-bucket count
-- ('' with fencing off).
-- When the SET is granted and the counter is below the proposal, the bucket's
-- counter is raised to it in the same step (the one-round fast path,
-- docs/fencing.md), and the lambda set's entry of this TTL is made to reach
-- now + TTL at least (rule Q of docs/safety.md): when it falls short, it is
-- set to now + 2 TTL, so the grants of the next TTL of time write nothing.
-- Returns {granted (1 or 0), the counter before any raise (the largest of the
-- bucket, the per-key counter and the floor) as a decimal string, the
-- certificate or '', raised (1 or 0), when refused the number of
-- subscribers to the key's release channel (one per waiting client; -1 when
-- the user may not ask) else 0, and the incarnation or ''}; an error reply,
-- changing nothing, when the fence-bucket counts differ.
if ARGV[6] ~= '' then
  local b = redis.call('GET', KEYS[7])
  if not b then
    redis.call('SET', KEYS[7], ARGV[6])
  elseif b ~= ARGV[6] then
    return redis.error_reply('QLBUCKETS the masters use ' .. b .. ' fence buckets, this client ' .. ARGV[6])
  end
end
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
for k = 3, 4 do
  local v = redis.call('GET', KEYS[k])
  if v and tonumber(v) > tonumber(counter) then
    counter = v
  end
end
local raised = 0
local waiting = 0
if granted == 1 then
  if ARGV[3] ~= '0' and tonumber(counter) < tonumber(ARGV[3]) then
    redis.call('SET', KEYS[2], ARGV[3])
    raised = 1
  end
  -- Rule Q needs every live lease's end at or below its TTL's entry. This
  -- lease ends by now + TTL: while the entry is there already, nothing is
  -- written; else it is set to now + 2 TTL, which covers the leases of the
  -- next TTL of time with no write.
  local t = redis.call('TIME')
  local now = t[1] * 1000 + math.floor(t[2] / 1000)
  local ttl = tonumber(ARGV[2])
  -- pcall: an ACL user of an earlier version's line (without +zscore)
  -- still locks, writing the entry on every grant as that version did.
  local recorded = redis.pcall('ZSCORE', KEYS[6], ARGV[2])
  if type(recorded) ~= 'string' or tonumber(recorded) < now + ttl then
    redis.call('ZADD', KEYS[6], 'GT', string.format('%d', now + 2 * ttl), ARGV[2])
  end
else
  -- pcall: a user without +pubsub|numsub still gets its refusal; -1 means unknown
  local n = redis.pcall('PUBSUB', 'NUMSUB', ARGV[5])
  if type(n) == 'table' and n.err == nil then
    waiting = n[2]
  else
    waiting = -1
  end
end
return {granted, counter, redis.call('GET', KEYS[5]) or '', raised, waiting, redis.call('GET', KEYS[8]) or ''}
