-- Raises a master's counters (never lowers them), atomically (rules S, Y
-- and R of docs/safety.md).
-- KEYS[1] the lambda set, KEYS[2..] counters (buckets, the floor).
-- ARGV[1] n, the number of lambda entries; ARGV[2..2n+1] pairs of expiry
-- (server ms) and TTL (ms), added with ZADD GT; then one decimal value per
-- counter, in KEYS order. A counter below its value is set to it.
-- Returns the number of counters raised.
local n = tonumber(ARGV[1])
for i = 1, n do
  redis.call('ZADD', KEYS[1], 'GT', ARGV[2 * i], ARGV[2 * i + 1])
end
local raised = 0
for i = 2, #KEYS do
  local want = ARGV[2 * n + i]
  local cur = redis.call('GET', KEYS[i])
  if not cur or tonumber(cur) < tonumber(want) then
    redis.call('SET', KEYS[i], want)
    raised = raised + 1
  end
end
return raised
