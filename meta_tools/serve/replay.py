"""Each sealed `request_state` works once: a replay would run its step's tools again.

A 2026-07-28 sampling call goes on in a new request that carries the state of
the last one (see `resume`). Sent twice, the same state would run the same
step twice, tools and their side effects included. `UsedStates` remembers
every state that was opened, until it expires, so that a second use is
refused: in the process (bounded), and also in Redis when the config has
`memory.redis_url`, so that a state used on one replica is refused on the
others. A refusal, not the first answer again: that would mean storing every
answer and making a concurrent second use wait for the first; a client that
lost an answer calls the tool again from the start, as after any refused state.
"""

from __future__ import annotations

import hashlib
import logging
import math
import time
from collections import OrderedDict
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager
from typing import TYPE_CHECKING

from ..config import MemoryConfig
from ..support.redis_client import connect, redis_errors

if TYPE_CHECKING:
    import redis.asyncio

__all__ = ["MAX_REMEMBERED", "UsedStates", "used_states"]

logger = logging.getLogger("meta_tools.server")

MAX_REMEMBERED = 65_536
"""How many used states one process remembers (about 10 MB at most)."""

_NAMESPACE = "meta_tools:used_state:"


class UsedStates:
    """The sealed states already opened, each kept until it expires.

    Args:
        client: a Redis shared by the replicas (closed by its owner); None: this
            process only. A Redis fault is logged and leaves this process's record.
        max_entries: states remembered in the process; past that the oldest is
            forgotten first (and a warning logged once).
    """

    def __init__(
        self, *, client: redis.asyncio.Redis | None = None, max_entries: int = MAX_REMEMBERED
    ) -> None:
        self._client = client
        self._errors = redis_errors() if client is not None else ()
        self._max = max_entries
        self._expiry: OrderedDict[str, float] = OrderedDict()  # oldest first (equal lifetimes)
        self._warned = False

    async def claim(self, state: str, ttl_s: float) -> bool:
        """Whether this is the first use of `state` (sealed, valid for `ttl_s` at most)."""
        key = hashlib.sha256(state.encode()).hexdigest()
        if not self._claim_here(key, ttl_s):
            return False
        if self._client is None:
            return True
        try:
            first = await self._client.set(
                _NAMESPACE + key, b"1", nx=True, px=max(1, math.ceil(ttl_s * 1000))
            )
        except self._errors as exc:
            logger.warning(
                "Redis: cannot record a used request_state (%r); only this replica refuses"
                " its replays",
                exc,
            )
            return True
        return bool(first)

    def _claim_here(self, key: str, ttl_s: float) -> bool:
        now = time.monotonic()
        expiry = self._expiry
        while expiry and next(iter(expiry.values())) <= now:  # oldest first
            expiry.popitem(last=False)
        if expiry.get(key, now) > now:
            return False
        if len(expiry) >= self._max:
            expiry.popitem(last=False)
            if not self._warned:
                self._warned = True
                logger.warning(
                    "more than %d request_states used within their lifetime: the oldest are"
                    " forgotten, so they could be replayed; lower serve.state_ttl_s",
                    self._max,
                )
        expiry[key] = now + ttl_s
        expiry.move_to_end(key)
        return True


@asynccontextmanager
async def used_states(memory: MemoryConfig) -> AsyncIterator[UsedStates]:
    """The record of used states for a served config: in its memory's Redis if it has one."""
    if memory.redis_url is None:
        yield UsedStates()
        return
    client = connect(memory.redis_url)
    try:
        yield UsedStates(client=client)
    finally:
        await client.aclose()
