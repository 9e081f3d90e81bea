"""Result cache: memoise tool results by (tool, canonical arguments), with a TTL and an LRU bound.

Opt-in: a category (`cache` in its config) or an MCP server (`cache` in its
server config) wraps its tools in `CachedTool`. Only results are stored;
errors (invalid arguments, a tool that raised, a timeout) never are. The
store is in memory by default (`MemoryCache`) and in Redis when `redis_url`
is set (`RedisCache`), so that several router processes share it.

A `CachedTool` says in each `ToolAnswer` whether the cache answered
(`cached`); the category counts these in `usage.cache_hits`,
`usage.cache_misses` and `Execution.cached`.
"""

from __future__ import annotations

import hashlib
import json
import logging
import time
from collections import OrderedDict
from collections.abc import Callable, Mapping
from dataclasses import dataclass
from typing import Any, Protocol

import anyio
from pydantic_core import to_jsonable_python

from ..exceptions import ToolError
from ..support.redis_client import LRU_EVICT, NOW, connect, redis_errors
from .base import BaseTool, ToolAnswer, ToolContext, timeout_error
from .wrapper import ToolWrapper

__all__ = [
    "CacheEntry",
    "CachedTool",
    "MemoryCache",
    "RedisCache",
    "ResultCache",
    "canonical_arguments",
]

logger = logging.getLogger("meta_tools.cache")


def canonical_arguments(arguments: Mapping[str, Any]) -> str:
    """Validated arguments as canonical JSON: sorted keys, no spaces, so equal calls match."""
    return json.dumps(
        to_jsonable_python(arguments, fallback=repr),
        sort_keys=True,
        separators=(",", ":"),
        ensure_ascii=False,
    )


@dataclass(frozen=True, slots=True)
class CacheEntry:
    """A stored result (a wrapper, so that a cached `None` is still a hit)."""

    value: Any


class ResultCache(Protocol):
    """Where results live; `get` returns None on a miss (or an expired entry)."""

    async def get(self, tool: str, arguments: str) -> CacheEntry | None: ...

    async def set(self, tool: str, arguments: str, value: Any) -> None: ...

    async def aclose(self) -> None: ...


class MemoryCache:
    """An in-process LRU with a TTL per entry.

    Args:
        ttl_s: seconds an entry stays valid.
        max_entries: the least recently used entry goes when this is exceeded.
        clock: monotonic seconds (injectable for tests).
    """

    def __init__(
        self,
        *,
        ttl_s: float = 300.0,
        max_entries: int = 1024,
        clock: Callable[[], float] = time.monotonic,
    ) -> None:
        if ttl_s <= 0 or max_entries < 1:
            raise ValueError("ttl_s must be > 0 and max_entries >= 1")
        self.ttl_s = ttl_s
        self.max_entries = max_entries
        self._clock = clock
        self._entries: OrderedDict[tuple[str, str], tuple[float, Any]] = OrderedDict()

    def __len__(self) -> int:
        return len(self._entries)

    async def get(self, tool: str, arguments: str) -> CacheEntry | None:
        key = (tool, arguments)
        found = self._entries.get(key)
        if found is None:
            return None
        expires, value = found
        if self._clock() >= expires:
            del self._entries[key]
            return None
        self._entries.move_to_end(key)
        return CacheEntry(value)

    async def set(self, tool: str, arguments: str, value: Any) -> None:
        key = (tool, arguments)
        self._entries[key] = (self._clock() + self.ttl_s, value)
        self._entries.move_to_end(key)
        while len(self._entries) > self.max_entries:
            self._entries.popitem(last=False)

    async def aclose(self) -> None:
        self._entries.clear()


# Both scripts run atomically in Redis (see `meta_tools.support.redis_client`): a key unused for
# longer than the TTL has expired, and the least recently used go first.
_GET = (
    NOW
    + """
local value = redis.call('GET', KEYS[1])
if value then redis.call('ZADD', KEYS[2], now, KEYS[1]) end
return value
"""
)
_SET = (
    NOW
    + """
local ttl, limit = tonumber(ARGV[2]), tonumber(ARGV[3])
redis.call('SET', KEYS[1], ARGV[1], 'PX', ttl)
"""
    + LRU_EVICT
)


class RedisCache:
    """Results shared through Redis (`redis.asyncio`), JSON-encoded, with TTL and LRU bound.

    A cached value comes back as its JSON form (a pydantic model as a dict),
    which renders to the same text for the LLM. Redis faults are logged and
    count as misses: the cache never fails a tool call.

    Args:
        url: `redis://host:port/db`.
        namespace: keys are `{namespace}:...` (the braces keep them in one cluster slot).
        ttl_s: seconds an entry stays valid.
        max_entries: bound on this namespace's entries (least recently used go first).
    """

    def __init__(
        self, url: str, *, namespace: str, ttl_s: float = 300.0, max_entries: int = 1024
    ) -> None:
        if ttl_s <= 0 or max_entries < 1:
            raise ValueError("ttl_s must be > 0 and max_entries >= 1")
        self.namespace = namespace
        self.ttl_ms = max(int(ttl_s * 1000), 1)
        self.max_entries = max_entries
        self._client = connect(url)
        self._errors = redis_errors()
        self._get = self._client.register_script(_GET)
        self._set = self._client.register_script(_SET)
        self._index = f"{{{namespace}}}:lru"
        self._clock = f"{{{namespace}}}:clock"

    def key(self, tool: str, arguments: str) -> str:
        digest = hashlib.sha256(arguments.encode()).hexdigest()[:32]
        return f"{{{self.namespace}}}:{tool}:{digest}"

    async def get(self, tool: str, arguments: str) -> CacheEntry | None:
        try:
            raw = await self._get(keys=[self.key(tool, arguments), self._index, self._clock])
        except self._errors as exc:
            logger.warning("cache %r: lookup failed, treated as a miss: %s", self.namespace, exc)
            return None
        return None if raw is None else CacheEntry(json.loads(raw))

    async def set(self, tool: str, arguments: str, value: Any) -> None:
        payload = json.dumps(to_jsonable_python(value, fallback=repr), ensure_ascii=False)
        try:
            await self._set(
                keys=[self.key(tool, arguments), self._index, self._clock],
                args=[payload, self.ttl_ms, self.max_entries],
            )
        except self._errors as exc:
            logger.warning("cache %r: store failed, result not cached: %s", self.namespace, exc)

    async def aclose(self) -> None:
        await self._client.aclose()


class CachedTool(ToolWrapper):
    """A tool whose results are memoised; everything the LLM sees is the inner tool's.

    It wraps one call method, `answer` (`call` goes through it); every other
    member is the inner tool's (`ToolWrapper`).

    Args:
        inner: the tool to wrap.
        cache: where results are kept (shared by every tool of a category or server).
    """

    def __init__(self, inner: BaseTool, cache: ResultCache) -> None:
        super().__init__(inner)
        self.cache = cache

    async def answer(
        self,
        arguments: Mapping[str, Any] | str | None,
        *,
        context: ToolContext | None = None,
        timeout: float | None = None,
    ) -> ToolAnswer:
        """Answer from the cache, or run the inner tool and keep its result; errors are never stored.

        Invalid arguments are checked before the lookup. The answer says whether the
        cache answered.

        A call that fails after the lookup still counts as a miss (`cached=False`).
        """
        looked_up = False
        try:
            key = canonical_arguments(self.inner.validate_arguments(arguments))
            with anyio.fail_after(timeout):
                entry = await self.cache.get(self.name, key)
                if entry is not None:
                    return ToolAnswer(entry.value, cached=True)
                looked_up = True
                value = await self.inner.call(arguments, context=context)
                await self.cache.set(self.name, key, value)
        except TimeoutError:
            failure: ToolError = timeout_error(self.name, timeout)
        except ToolError as exc:
            failure = exc
        else:
            return ToolAnswer(value, cached=False)
        return ToolAnswer(error=failure, cached=False if looked_up else None)
