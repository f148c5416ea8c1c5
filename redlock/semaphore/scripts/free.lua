-- The survey of a multi-master semaphore, on one master: which slot keys
-- are absent here. Read-only.
-- KEYS the slot keys, in slot order.
-- Returns the indexes (0-based) of the absent ones.
local out = {}
for i, key in ipairs(KEYS) do
  if redis.call('EXISTS', key) == 0 then
    out[#out + 1] = i - 1
  end
end
return out
