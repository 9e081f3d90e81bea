"""`OwnedModels`: the chat models a router built itself, each closed once no call uses it.

A router that builds its model from the config's `model` section owns it. A
reload that changes that section builds a new model, but calls already
running keep the old one; so the old one is closed when the last of those
calls ends (or with the router), and reloads do not pile up open clients.
"""

from __future__ import annotations

from collections import Counter
from collections.abc import AsyncIterator
from contextlib import asynccontextmanager

import anyio

from ..support.lifecycle import AsyncCloseable
from .base import ChatModel

__all__ = ["OwnedModels", "close_model"]


async def close_model(model: ChatModel) -> None:
    """`aclose()` a model that has one (a `ChatModel` need not), even in a cancelled task."""
    closer = getattr(model, "aclose", None)
    if closer is not None:
        with anyio.CancelScope(shield=True):
            await closer()


class OwnedModels(AsyncCloseable):
    """The current owned model, and the replaced ones that calls still use.

    Attributes:
        current: the model the router built and uses now; None when it was given one.
    """

    def __init__(self) -> None:
        self.current: ChatModel | None = None
        self._retired: list[ChatModel] = []
        self._calls: Counter[int] = Counter()  # running calls per model, by id

    async def replace(self, model: ChatModel) -> None:
        """Own `model` from now on; the one it replaces is closed once no call uses it."""
        old, self.current = self.current, model
        if old is not None:
            self._retired.append(old)
            await self._close_if_idle(old)

    @asynccontextmanager
    async def using(self, model: ChatModel) -> AsyncIterator[None]:
        """Count a call that uses `model` (owned or not) while the block runs."""
        key = id(model)
        self._calls[key] += 1
        try:
            yield
        finally:
            self._calls[key] -= 1
            if not self._calls[key]:
                del self._calls[key]
                await self._close_if_idle(model)

    async def aclose(self) -> None:
        """Close every owned model, whether calls still use it or not."""
        models = [*self._retired, self.current] if self.current is not None else self._retired
        self.current, self._retired = None, []
        for model in models:
            await close_model(model)

    async def _close_if_idle(self, model: ChatModel) -> None:
        if self._calls[id(model)] or not any(m is model for m in self._retired):
            return
        self._retired = [m for m in self._retired if m is not model]
        await close_model(model)
