"""What a category remembers between runs: a bounded memory of past runs per session.

A `MemoryStore` keeps the objective and summary of recent runs per session,
shown to the category's LLM as context: `SessionMemory` in the process (the
default), `RedisMemory` in Redis, shared by every router replica. Both have
the same bounds. (One run's own state is `RunState`.)
"""

from __future__ import annotations

import hashlib
import json
import logging
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Protocol

from .._redis import LRU_EVICT, NOW, redis_errors
from .result import truncate

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["MAX_SESSIONS", "MemoryStore", "RedisMemory", "SessionMemory"]

logger = logging.getLogger("meta_tools.memory")

#: Sessions a category remembers; beyond this the least recently used one is forgotten.
MAX_SESSIONS = 256


class MemoryStore(Protocol):
    """Past runs per session: `size` per session, `None` (no session) neither sees nor leaves any."""

    size: int

    async def past_runs(self, session: str | None) -> list[dict[str, str]]:
        """The session's last runs, oldest first (`objective`, `summary`)."""
        ...

    async def remember(self, session: str | None, objective: str, summary: str) -> None:
        """Add a run to the session's memory (a no-op without a session or with `size` 0)."""
        ...

    def resized(self, size: int) -> MemoryStore:
        """This store at another size (itself when the size is the same, so it stays shared)."""
        ...


def _entry(objective: str, summary: str) -> dict[str, str]:
    return {"objective": truncate(objective, 200), "summary": truncate(summary, 300)}


class SessionMemory:
    """Past runs (objective and summary) per session, bounded both ways.

    Each session keeps its last `size` runs; beyond `max_sessions` sessions the
    least recently used one is forgotten. `size=0` remembers nothing, and a run
    without a session is neither shown past runs nor remembered.
    """

    def __init__(self, size: int, *, max_sessions: int = MAX_SESSIONS) -> None:
        self.size = size
        self.max_sessions = max_sessions
        self._sessions: OrderedDict[str, deque[dict[str, str]]] = OrderedDict()

    async def past_runs(self, session: str | None) -> list[dict[str, str]]:
        return list(self._sessions.get(session, ())) if session is not None else []

    async def remember(self, session: str | None, objective: str, summary: str) -> None:
        if self.size == 0 or session is None:
            return
        key = session
        runs = self._sessions.get(key)
        if runs is None:
            runs = self._sessions[key] = deque(maxlen=self.size)
            while len(self._sessions) > self.max_sessions:
                self._sessions.popitem(last=False)
        self._sessions.move_to_end(key)
        runs.append(_entry(objective, summary))

    def resized(self, size: int) -> SessionMemory:
        """This memory itself when `size` is its size (so it stays shared), else a copy."""
        if size == self.size:
            return self
        copy = SessionMemory(size, max_sessions=self.max_sessions)
        copy._sessions = OrderedDict(
            (key, deque(runs, maxlen=size)) for key, runs in self._sessions.items()
        )
        return copy


# Atomic in Redis: append the run, keep the last `size`, refresh the TTL, then the
# LRU bound on the category's sessions (as `SessionMemory` has).
_REMEMBER = (
    NOW
    + """
local size, ttl, limit = tonumber(ARGV[2]), tonumber(ARGV[3]), tonumber(ARGV[4])
redis.call('RPUSH', KEYS[1], ARGV[1])
redis.call('LTRIM', KEYS[1], -size, -1)
redis.call('PEXPIRE', KEYS[1], ttl)
"""
    + LRU_EVICT
)


class RedisMemory:
    """Past runs in Redis, so that every router replica sees the same memory of a client.

    The same bounds as `SessionMemory` (`size` runs per session, `max_sessions`
    sessions per category, least recently used forgotten first), plus a TTL: a
    session unused for `ttl_s` is forgotten. Session keys are stored hashed. A
    Redis fault is logged and means no memory for that call, never a failed call.

    Args:
        client: a `redis.asyncio.Redis` (shared, closed by its owner).
        namespace: the category's keys are `{namespace}:...` (one cluster slot).
    """

    def __init__(
        self,
        client: redis.asyncio.Redis,
        *,
        namespace: str,
        size: int,
        ttl_s: float,
        max_sessions: int = MAX_SESSIONS,
    ) -> None:
        self.size = size
        self.ttl_s = ttl_s
        self.namespace = namespace
        self.max_sessions = max_sessions
        self._client = client
        self._errors = redis_errors()
        self._remember = client.register_script(_REMEMBER)
        self._index = f"{{{namespace}}}:lru"
        self._clock = f"{{{namespace}}}:clock"

    def key(self, session: str) -> str:
        return f"{{{self.namespace}}}:session:{hashlib.sha256(session.encode()).hexdigest()[:32]}"

    async def past_runs(self, session: str | None) -> list[dict[str, str]]:
        if session is None or self.size == 0:
            return []
        try:
            raw = await self._client.lrange(self.key(session), -self.size, -1)
        except self._errors as exc:
            logger.warning("memory %r: read failed, this call has none: %s", self.namespace, exc)
            return []
        return [json.loads(item) for item in raw]

    async def remember(self, session: str | None, objective: str, summary: str) -> None:
        if session is None or self.size == 0:
            return
        entry = json.dumps(_entry(objective, summary), ensure_ascii=False)
        ttl_ms = max(int(self.ttl_s * 1000), 1)
        try:
            await self._remember(
                keys=[self.key(session), self._index, self._clock],
                args=[entry, self.size, ttl_ms, self.max_sessions],
            )
        except self._errors as exc:
            logger.warning("memory %r: write failed, run not remembered: %s", self.namespace, exc)

    def resized(self, size: int) -> RedisMemory:
        if size == self.size:
            return self
        return RedisMemory(
            self._client,
            namespace=self.namespace,
            size=size,
            ttl_s=self.ttl_s,
            max_sessions=self.max_sessions,
        )
