-- Fenced write: apply the accept rule and, if it passes, store the value.
-- KEYS[1]  the resource's hash
-- ARGV[1]  token, decimal in [1, 2^53-1]
-- ARGV[2]  holder
-- ARGV[3]  value
-- Returns {1} when accepted, {0, highest, holder} when the token is stale.
local token = tonumber(ARGV[1])
local cur = redis.call('HMGET', KEYS[1], 'highest', 'holder')
if cur[1] then
  local highest = tonumber(cur[1])
  if token < highest or (token == highest and cur[2] ~= ARGV[2]) then
    return {0, highest, cur[2]}
  end
end
redis.call('HSET', KEYS[1], 'highest', ARGV[1], 'holder', ARGV[2], 'value', ARGV[3])
return {1}
