"""The Lua scripts of ``RedisStreamStore``: the lock and stream-lease operations that must
be atomic (one round trip, no other client in between)."""

__all__ = ("FINALIZE", "RELEASE", "RENEW")

# Delete the lock only if it still holds our token (it may have lapsed and been taken by
# another worker meanwhile).
RELEASE = """
if redis.call('get', KEYS[1]) == ARGV[1] then return redis.call('del', KEYS[1]) end
return 0
"""
# Renew our lock; take it back if it lapsed and nobody took it (a Redis blip).
RENEW = """
local holder = redis.call('get', KEYS[1])
if holder == ARGV[1] then return redis.call('pexpire', KEYS[1], ARGV[2]) end
if not holder then return redis.call('set', KEYS[1], ARGV[1], 'PX', ARGV[2]) and 1 or 0 end
return 0
"""
# End a stream whose producer's lease lapsed (KEYS: stream, alive, active; ARGV: the
# error blob, retention, stream id). 1 when this call ended it, 0 when it is alive or
# already ended.
FINALIZE = """
if redis.call('exists', KEYS[2]) == 1 then return 0 end
local blob = ARGV[1]
local last = redis.call('xrevrange', KEYS[1], '+', '-', 'COUNT', 1)[1]
if last then
  local fields = last[2]
  for i = 1, #fields, 2 do
    if fields[i] == 'end' then return 0 end
  end
  if fields[1] == 'b' and string.sub(fields[2], -14) == 'data: [DONE]\\n\\n' then
    blob = false  -- it had sent its last chunk: only the end marker is missing
  end
end
if blob then redis.call('xadd', KEYS[1], '*', 'b', blob) end
redis.call('xadd', KEYS[1], '*', 'end', 1)
redis.call('expire', KEYS[1], ARGV[2])
if redis.call('get', KEYS[3]) == ARGV[3] then redis.call('expire', KEYS[3], ARGV[2]) end
return 1
"""
