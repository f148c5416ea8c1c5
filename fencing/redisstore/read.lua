-- Fenced read: apply the accept rule, register the token, return the value.
-- KEYS[1]  the resource's hash
-- ARGV[1]  token, decimal in [1, 2^53-1]
-- ARGV[2]  holder
-- Returns {1, value} when accepted, {2} when accepted but there is no value
-- yet, {0, highest, holder} when the token is stale.
local token = tonumber(ARGV[1])
local cur = redis.call('HMGET', KEYS[1], 'highest', 'holder', 'value')
if cur[1] then
  local highest = tonumber(cur[1])
  if token < highest or (token == highest and cur[2] ~= ARGV[2]) then
    return {0, highest, cur[2]}
  end
  if token > highest then
    redis.call('HSET', KEYS[1], 'highest', ARGV[1], 'holder', ARGV[2])
  end
else
  redis.call('HSET', KEYS[1], 'highest', ARGV[1], 'holder', ARGV[2])
end
if cur[3] then
  return {1, cur[3]}
end
return {2}
