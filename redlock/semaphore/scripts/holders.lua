-- Live permits of an Atomic semaphore on one master, by the server's clock.
-- KEYS[1] the holders ZSET; ARGV[1] the timeout in ms. Read-only.
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000 + math.floor(tonumber(t[2]) / 1000)
-- string.format, not ..: Lua writes 10^14 as 1e+14
return redis.call('ZCOUNT', KEYS[1], '(' .. string.format('%d', now - tonumber(ARGV[1])), '+inf')
