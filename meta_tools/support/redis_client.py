"""What the Redis-backed stores share: one bounded client per URL, the fault types, Lua parts.

Redis is optional (`pip install meta-tools[redis]`); it is imported only when a
config names a `redis_url`. Every store treats a Redis fault as "nothing
stored": it is logged, and the call that needed Redis goes on without it.
"""

from __future__ import annotations

from typing import TYPE_CHECKING

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["LRU_EVICT", "NOW", "connect", "redis_errors"]

#: A Redis fault must not stall a call for long: connects and replies are bounded.
TIMEOUT_S = 2.0

# Lua: `now`, in microseconds of Redis's own clock made strictly increasing (so two
# uses in the same microsecond still have an order, and router processes need not
# agree on time). KEYS[3] holds the last value.
NOW = """
local t = redis.call('TIME')
local now = tonumber(t[1]) * 1000000 + tonumber(t[2])
local last = tonumber(redis.call('GET', KEYS[3]) or '0')
if now <= last then now = last + 1 end
redis.call('SET', KEYS[3], now)
"""

# Lua: KEYS[1] was just used; the sorted set KEYS[2] scores keys by last use. Keys
# unused for longer than `ttl` (ms) leave the index, then the least recently used
# beyond `limit` are deleted. Needs `now`, `ttl` and `limit` set.
LRU_EVICT = """
redis.call('ZADD', KEYS[2], now, KEYS[1])
redis.call('ZREMRANGEBYSCORE', KEYS[2], '-inf', now - ttl * 1000)
local excess = redis.call('ZCARD', KEYS[2]) - limit
if excess > 0 then
  local old = redis.call('ZRANGE', KEYS[2], 0, excess - 1)
  redis.call('DEL', unpack(old))
  redis.call('ZREM', KEYS[2], unpack(old))
end
return excess
"""


def connect(url: str) -> redis.asyncio.Redis:
    """A client for `url` whose connects and replies time out after `TIMEOUT_S`."""
    import redis.asyncio

    return redis.asyncio.Redis.from_url(
        url, socket_connect_timeout=TIMEOUT_S, socket_timeout=TIMEOUT_S
    )


def redis_errors() -> tuple[type[BaseException], ...]:
    """The exceptions that mean "Redis failed" (not a bug of ours)."""
    import redis

    return (redis.RedisError, OSError, TimeoutError)
