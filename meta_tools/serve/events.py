"""What a host gets again when it resumes a dropped stream: the events of each response stream.

On a 2025-11-25 streamable-HTTP session every message the router sends on a
response stream (the priming event, progress, sampling requests, the result)
is stored with an id before it is sent; a host whose connection dropped sends
the last id it saw as `Last-Event-ID` and gets every later event. The SDK's
`EventStore` knows streams only by their JSON-RPC request id, which every
session numbers from the same start, so the store here keeps events per
session: `SessionEvents` is one session's view of an `EventLog`, and an event
id given to one session means nothing in another.

Two logs, both bounded (`serve.resume`): `MemoryEventLog` in the process, and
`RedisEventLog` in `memory.redis_url`, shared by the replicas. Each keeps the
last `max_events` events of at most `max_streams` streams (the least recently
used stream goes first) for `ttl_s` after a stream's last event. A Redis fault
loses the event for a resumption (logged), never the call.
"""

from __future__ import annotations

import hashlib
import itertools
import logging
import re
import time
from collections import OrderedDict, deque
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from dataclasses import dataclass, field
from typing import TYPE_CHECKING, Any, Protocol

from mcp.server.streamable_http import EventCallback, EventId, EventMessage, EventStore, StreamId
from mcp_types import JSONRPCMessage
from mcp_types.jsonrpc import jsonrpc_message_adapter

from ..config import MemoryConfig, ResumeConfig
from ..support.redis_client import LRU_EVICT, NOW, connect, redis_errors

if TYPE_CHECKING:
    import redis.asyncio

__all__ = [
    "EventLog",
    "MemoryEventLog",
    "RedisEventLog",
    "SessionEvents",
    "StoredStream",
    "event_log",
]

logger = logging.getLogger("meta_tools.server")


@dataclass(frozen=True)
class StoredStream:
    """The events of one stream after a given event, and the stream's id (as the SDK names it)."""

    stream: StreamId
    events: list[EventMessage]


class EventLog(Protocol):
    """Where the events of every session's streams are kept (bounded)."""

    async def append(
        self, session: str, stream: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        """Keep one event (None: a priming event, which has no message) and return its id."""
        ...

    async def after(self, session: str, event_id: EventId) -> StoredStream | None:
        """The events of `event_id`'s stream after it; None if that event is not kept for `session`."""
        ...


class SessionEvents(EventStore):
    """One session's view of an `EventLog`: the SDK's `EventStore` for that session's transport."""

    def __init__(self, log: EventLog, session: str) -> None:
        self.log = log
        self.session = session

    async def store_event(self, stream_id: StreamId, message: JSONRPCMessage | None) -> EventId:
        return await self.log.append(self.session, stream_id, message)

    async def replay_events_after(
        self, last_event_id: EventId, send_callback: EventCallback
    ) -> StreamId | None:
        found = await self.log.after(self.session, last_event_id)
        if found is None:
            return None
        for event in found.events:
            await send_callback(event)
        return found.stream


@dataclass
class _Stream:
    session: str
    name: StreamId
    number: int
    events: deque[tuple[int, JSONRPCMessage | None]]
    last_used: float = field(default_factory=time.monotonic)


class MemoryEventLog:
    """Events in this process: ids are `<stream number>.<event number>`."""

    def __init__(self, settings: ResumeConfig) -> None:
        self.settings = settings
        self._streams: OrderedDict[tuple[str, StreamId], _Stream] = OrderedDict()  # oldest first
        self._numbered: dict[int, _Stream] = {}
        self._numbers = itertools.count(1)

    async def append(
        self, session: str, stream: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        self._forget_expired()
        key = (session, stream)
        found = self._streams.get(key)
        if found is None:
            found = _Stream(
                session, stream, next(self._numbers), deque(maxlen=self.settings.max_events)
            )
            self._streams[key] = self._numbered[found.number] = found
            while len(self._streams) > self.settings.max_streams:
                self._drop(next(iter(self._streams.values())))
        seq = found.events[-1][0] + 1 if found.events else 1
        found.events.append((seq, message))
        found.last_used = time.monotonic()
        self._streams.move_to_end(key)
        return f"{found.number}.{seq}"

    async def after(self, session: str, event_id: EventId) -> StoredStream | None:
        self._forget_expired()
        number, _, seq_text = event_id.partition(".")
        if not (number.isdigit() and seq_text.isdigit()):
            return None
        found = self._numbered.get(int(number))
        seq = int(seq_text)
        if found is None or found.session != session:
            return None
        if not found.events or not found.events[0][0] <= seq <= found.events[-1][0]:
            return None  # dropped (beyond max_events) or never given
        events = [
            EventMessage(message, f"{found.number}.{n}")
            for n, message in found.events
            if n > seq and message is not None
        ]
        return StoredStream(found.name, events)

    def _forget_expired(self) -> None:
        horizon = time.monotonic() - self.settings.ttl_s
        while self._streams:
            oldest = next(iter(self._streams.values()))
            if oldest.last_used > horizon:
                break
            self._drop(oldest)

    def _drop(self, stream: _Stream) -> None:
        del self._streams[(stream.session, stream.name)]
        del self._numbered[stream.number]


_ENTRY_ID = re.compile(r"[0-9]{1,20}-[0-9]{1,20}")
_NAMESPACE = "{meta_tools:events}"  # one cluster slot for the streams and their index

# Lua, atomic: append one event to the stream KEYS[1] (its last `max_events` kept, expiring
# `ttl` ms after this event), then drop the least recently used streams beyond `limit`.
# KEYS[2]: the index of streams by last use; KEYS[3]: the clock (see `meta_tools.support.redis_client`).
_APPEND = (
    NOW
    + """
local ttl, limit = tonumber(ARGV[5]), tonumber(ARGV[6])
local function evict()
"""
    + LRU_EVICT
    + """
end
local id = redis.call('XADD', KEYS[1], 'MAXLEN', ARGV[4], '*', 'p', ARGV[1], 's', ARGV[2], 'm', ARGV[3])
redis.call('PEXPIRE', KEYS[1], ttl)
evict()
return id
"""
)


class RedisEventLog:
    """Events in Redis streams, one per session stream: ids are `<stream digest>.<Redis entry id>`.

    Args:
        client: a `redis.asyncio.Redis` (shared, closed by its owner).
        settings: the bounds.
    """

    def __init__(self, client: redis.asyncio.Redis, settings: ResumeConfig) -> None:
        self.settings = settings
        self._client = client
        self._errors = redis_errors()
        self._append = client.register_script(_APPEND)
        self._ttl_ms = max(1, int(settings.ttl_s * 1000))

    @staticmethod
    def _digest(session: str, stream: StreamId) -> str:
        return hashlib.sha256(f"{session}\0{stream}".encode()).hexdigest()[:32]

    async def append(
        self, session: str, stream: StreamId, message: JSONRPCMessage | None
    ) -> EventId:
        digest = self._digest(session, stream)
        text = "" if message is None else message.model_dump_json(by_alias=True, exclude_unset=True)
        try:
            entry = await self._append(
                keys=[f"{_NAMESPACE}:{digest}", f"{_NAMESPACE}:lru", f"{_NAMESPACE}:clock"],
                args=[
                    session,
                    stream,
                    text,
                    self.settings.max_events,
                    self._ttl_ms,
                    self.settings.max_streams,
                ],
            )
        except self._errors as exc:
            logger.warning(
                "Redis: an event of a response stream was not kept (%r); a host"
                " that resumes past it will be refused",
                exc,
            )
            return f"{digest}.lost"
        return f"{digest}.{_text(entry)}"

    async def after(self, session: str, event_id: EventId) -> StoredStream | None:
        digest, _, entry = event_id.partition(".")
        if len(digest) != 32 or not _ENTRY_ID.fullmatch(entry):
            return None  # not an id we gave (or one whose event Redis could not keep)
        try:
            rows = await self._client.xrange(
                f"{_NAMESPACE}:{digest}", min=entry, max="+", count=self.settings.max_events + 1
            )
        except self._errors as exc:
            logger.warning("Redis: the events of a resumed stream cannot be read (%r)", exc)
            return None
        entries = _entries(rows)
        if not entries or entries[0][0] != entry:
            return None  # dropped (beyond max_events, expired) or never given
        first = entries[0][1]
        stream = first.get("s", "")
        if first.get("p") != session or self._digest(session, stream) != digest:
            return None
        events = [
            EventMessage(jsonrpc_message_adapter.validate_json(row["m"]), f"{digest}.{row_id}")
            for row_id, row in entries[1:]
            if row.get("m")  # a priming event has no message
        ]
        return StoredStream(stream, events)


def _entries(rows: Any) -> list[tuple[str, dict[str, str]]]:
    """XRANGE's rows as text: (entry id, fields)."""
    return [
        (_text(row_id), {_text(k): _text(v) for k, v in (fields or {}).items()})
        for row_id, fields in rows or []
    ]


def _text(value: bytes | str) -> str:
    return value.decode() if isinstance(value, bytes) else value


@asynccontextmanager
async def event_log(memory: MemoryConfig, settings: ResumeConfig) -> AsyncIterator[EventLog | None]:
    """The event log a served config keeps: None when resumption is off, else in its Redis if any."""
    if not settings.enabled:
        yield None
        return
    if memory.redis_url is None:
        yield MemoryEventLog(settings)
        return
    client = connect(memory.redis_url)
    try:
        yield RedisEventLog(client, settings)
    finally:
        await client.aclose()
