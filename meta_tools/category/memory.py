"""What a category remembers between runs: a bounded memory of past runs per session.

A `MemoryStore` keeps the objective and summary of recent runs per session,
shown to the category's LLM as context: `SessionMemory` in the process (the
default), `RedisMemory` in Redis, shared by every router replica. Both have
the same bounds. (One run's own state is `RunState`.)

What Redis holds is read as untrusted: anyone who can write to it (or an older
version that wrote another shape) can leave an entry there. Each entry must be a
`PastRun` no larger than one this store writes; anything else is skipped with a
warning, so a poisoned or oversized entry costs that entry, never the call.
"""

from __future__ import annotations

import hashlib
import logging
from collections import OrderedDict, deque
from typing import TYPE_CHECKING, Protocol

from pydantic import BaseModel, ConfigDict, Field, ValidationError

from ..support.redis_client import LRU_EVICT, NOW, redis_errors
from ..support.text import valid_utf8
from .result import truncate

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["MAX_SESSIONS", "MemoryStore", "PastRun", "RedisMemory", "SessionMemory"]

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


#: What a past run keeps: the objective and the summary, each cut to this many characters.
OBJECTIVE_CHARS = 200
SUMMARY_CHARS = 300
# Room for the marker `truncate` appends ("…[truncated 123456 characters]").
_MARKER_CHARS = 40
# An entry this store writes is far smaller (at most 6 bytes a character, JSON-escaped);
# a larger one is not parsed at all.
MAX_ENTRY_BYTES = 8 * (OBJECTIVE_CHARS + SUMMARY_CHARS + 2 * _MARKER_CHARS)


class PastRun(BaseModel):
    """One remembered run, as stored: also the check of every entry read back from Redis."""

    model_config = ConfigDict(frozen=True, extra="forbid", strict=True)

    objective: str = Field(max_length=OBJECTIVE_CHARS + _MARKER_CHARS)
    summary: str = Field(max_length=SUMMARY_CHARS + _MARKER_CHARS)

    @classmethod
    def of(cls, objective: str, summary: str) -> PastRun:
        """The run as remembered: both texts cut to their bounds, made valid UTF-8."""
        return cls(
            objective=truncate(valid_utf8(objective), OBJECTIVE_CHARS),
            summary=truncate(valid_utf8(summary), SUMMARY_CHARS),
        )


def _entry(objective: str, summary: str) -> dict[str, str]:
    return PastRun.of(objective, summary).model_dump()


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

# The session's last ARGV[1] runs, each longer than ARGV[2] bytes replaced by its
# length: what Redis sends back is bounded too, not only what reaches the prompt.
_PAST_RUNS = """
local runs = redis.call('LRANGE', KEYS[1], -tonumber(ARGV[1]), -1)
for i, run in ipairs(runs) do
  if #run > tonumber(ARGV[2]) then runs[i] = #run end
end
return runs
"""


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
        self._past_runs = client.register_script(_PAST_RUNS)
        self._index = f"{{{namespace}}}:lru"
        self._clock = f"{{{namespace}}}:clock"

    def key(self, session: str) -> str:
        return f"{{{self.namespace}}}:session:{hashlib.sha256(session.encode()).hexdigest()[:32]}"

    async def past_runs(self, session: str | None) -> list[dict[str, str]]:
        if session is None or self.size == 0:
            return []
        try:
            raw = await self._past_runs(keys=[self.key(session)], args=[self.size, MAX_ENTRY_BYTES])
        except self._errors as exc:
            logger.warning("memory %r: read failed, this call has none: %s", self.namespace, exc)
            return []
        return self._valid(raw)

    async def remember(self, session: str | None, objective: str, summary: str) -> None:
        if session is None or self.size == 0:
            return
        entry = PastRun.of(objective, summary).model_dump_json()
        ttl_ms = max(int(self.ttl_s * 1000), 1)
        try:
            await self._remember(
                keys=[self.key(session), self._index, self._clock],
                args=[entry, self.size, ttl_ms, self.max_sessions],
            )
        except self._errors as exc:
            logger.warning("memory %r: write failed, run not remembered: %s", self.namespace, exc)

    def _valid(self, raw: list[bytes | str | int]) -> list[dict[str, str]]:
        """The entries that are past runs; each other one is logged and skipped."""
        runs = []
        for position, item in enumerate(raw, 1):
            try:
                runs.append(_past_run(item).model_dump())
            except ValueError as exc:
                logger.warning(
                    "memory %r: past run %d of %d skipped, it is not one this store wrote: %s",
                    self.namespace,
                    position,
                    len(raw),
                    exc,
                )
        return runs

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


def _past_run(item: bytes | str | int) -> PastRun:
    """An entry as Redis sent it: a JSON text, or the length of one too large to send.

    Raises:
        ValueError: it is no past run; the message says why without quoting it (it may
            be large, or hold what it should not).
    """
    if isinstance(item, int):
        raise ValueError(f"{item} bytes, more than the {MAX_ENTRY_BYTES} of a stored run")
    try:
        return PastRun.model_validate_json(item)
    except ValidationError as exc:
        errors = exc.errors(include_url=False, include_input=False, include_context=False)
        raise ValueError(
            "; ".join(f"{'.'.join(map(str, e['loc'])) or 'entry'}: {e['msg']}" for e in errors[:3])
        ) from None
