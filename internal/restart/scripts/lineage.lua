-- The master's lineage, "run_id master_replid incarnation", and its role
-- (prepended to the scripts that need them; KEYS[1] is always the
-- incarnation key).
local function lineage()
  local info = redis.call('INFO', 'server', 'replication')
  local function field(name)
    local s = string.find(info, '\n' .. name, 1, true)
    if not s then return '' end
    local b = s + 1 + #name
    local e = string.find(info, '\r', b, true) or (#info + 1)
    return string.sub(info, b, e - 1)
  end
  local inc = redis.call('GET', KEYS[1]) or ''
  return field('run_id:') .. ' ' .. field('master_replid:') .. ' ' .. inc, field('role:')
end
