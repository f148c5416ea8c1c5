-- Round 1 of several acquisitions, run atomically on one master: the
-- batcher sends neighbouring acquires as one call of this script
-- (redlock/merge.go). Each lock is answered as acquire.lua would answer it
-- alone (TestMergedAndLoneAcquiresAgree runs both on the same states).
-- KEYS[1] the fence-bucket count the masters' clients use, KEYS[2] the token
-- floor, KEYS[3] the master's certificate, KEYS[4] the lambda set, KEYS[5]
-- the master's incarnation; then three per lock: the lock key, its bucket's
-- fencing counter, and its per-key counter of an earlier version (read,
-- never written).
-- ARGV[1] the client's fence-bucket count ('' with fencing off); then five
-- per lock: the lease's random value, the TTL in milliseconds, a proposed
-- token (decimal, below 2^53) or '0' for none, the value of a lease of this
-- client that was just released or '' (its delete may still be on its way
-- here: the key counts as free), and the key's release channel.
-- When a SET is granted and the counter is below the proposal, the bucket's
-- counter is raised to it in the same step (the one-round fast path,
-- docs/fencing.md), and the lambda set's entry of the lease's TTL is made to
-- reach now + TTL at least (rule Q of docs/safety.md): when it falls short,
-- it is set to now + 2 TTL, so the grants of the next TTL of time write
-- nothing.
-- Returns one reply per lock, in order: {granted (1 or 0), the counter before
-- any raise (the largest of the bucket, the per-key counter and the floor)
-- as a decimal string, the certificate or '', raised (1 or 0), when refused
-- the number of subscribers to the key's release channel (one per waiting
-- client; -1 when the user may not ask) else 0, and the incarnation or ''};
-- or that lock's error alone (a key of another type, say), which leaves the
-- other locks' replies as they would be on their own. An error reply for the
-- whole call, changing nothing, when the fence-bucket counts differ or a
-- shared key cannot be read.
if ARGV[1] ~= '' then
  local b = redis.call('GET', KEYS[1])
  if not b then
    redis.call('SET', KEYS[1], ARGV[1])
  elseif b ~= ARGV[1] then
    return redis.error_reply('QLBUCKETS the masters use ' .. b .. ' fence buckets, this client ' .. ARGV[1])
  end
end
-- The shared keys: no lock key can be one of them (the reserved prefix), and
-- nothing below writes them.
local floor = redis.call('GET', KEYS[2])
local cert = redis.call('GET', KEYS[3]) or ''
local inc = redis.call('GET', KEYS[5]) or ''

-- take runs one lock's SET and counter reads; k and a index its first key
-- and argument.
local function take(k, a)
  local granted = 0
  if redis.call('SET', KEYS[k], ARGV[a], 'NX', 'PX', ARGV[a + 1]) then
    granted = 1
  else
    local current = redis.call('GET', KEYS[k])
    if current == ARGV[a] then
      granted = 1 -- our own SET, sent again after a lost reply
    elseif ARGV[a + 3] ~= '' and current == ARGV[a + 3] then
      redis.call('SET', KEYS[k], ARGV[a], 'PX', ARGV[a + 1]) -- our own released lease's key
      granted = 1
    end
  end
  local counter = redis.call('GET', KEYS[k + 1]) or '0'
  local legacy = redis.call('GET', KEYS[k + 2])
  if legacy and tonumber(legacy) > tonumber(counter) then
    counter = legacy
  end
  if floor and tonumber(floor) > tonumber(counter) then
    counter = floor
  end
  local raised = 0
  local waiting = 0
  if granted == 1 then
    if ARGV[a + 2] ~= '0' and tonumber(counter) < tonumber(ARGV[a + 2]) then
      redis.call('SET', KEYS[k + 1], ARGV[a + 2])
      raised = 1
    end
  else
    -- pcall: a user without +pubsub|numsub still gets its refusal; -1 means unknown
    local n = redis.pcall('PUBSUB', 'NUMSUB', ARGV[a + 4])
    if type(n) == 'table' and n.err == nil then
      waiting = n[2]
    else
      waiting = -1
    end
  end
  return {granted, counter, cert, raised, waiting, inc}
end

-- failed is the error reply of a lock whose take raised e: a command's
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

local locks = (#KEYS - 5) / 3
local out = {}
local ttls = {} -- the TTLs of the granted locks, each with the indexes of its locks
for i = 1, locks do
  local a = 2 + 5 * (i - 1)
  local ok, r = pcall(take, 3 + 3 * i, a)
  if not ok then
    out[i] = failed(r)
  else
    out[i] = r
    if r[1] == 1 then
      ttls[ARGV[a + 1]] = ttls[ARGV[a + 1]] or {}
      table.insert(ttls[ARGV[a + 1]], i)
    end
  end
end

-- Rule Q needs every live lease's end at or below its TTL's entry. Every
-- lease granted above ends by now + TTL, now read after the last SET: while
-- the entry is there already, nothing is written; else it is set to now + 2
-- TTL, which covers the leases of the next TTL of time with no write.
local now
local function cover(member)
  if not now then
    local t = redis.call('TIME')
    now = t[1] * 1000 + math.floor(t[2] / 1000)
  end
  local ttl = tonumber(member)
  -- pcall: an ACL user of an earlier version's line (without +zscore)
  -- still locks, writing the entry on every grant as that version did.
  local recorded = redis.pcall('ZSCORE', KEYS[4], member)
  if type(recorded) ~= 'string' or tonumber(recorded) < now + ttl then
    redis.call('ZADD', KEYS[4], 'GT', string.format('%d', now + 2 * ttl), member)
  end
end
for member, granted in pairs(ttls) do
  local ok, e = pcall(cover, member)
  if not ok then
    for _, i in ipairs(granted) do
      out[i] = failed(e) -- granted, but not covered: the caller deletes it
    end
  end
end
return out
