"""`AsyncCloseable`: the one way our resource owners work as async context managers."""

from __future__ import annotations

import asyncio
from abc import ABC, abstractmethod
from types import TracebackType

import anyio
from typing_extensions import Self

__all__ = ["AsyncCloseable", "is_cancellation"]


def is_cancellation(exc: BaseException) -> bool:
    """Whether `exc` is the current task being cancelled (to propagate), not a value to report.

    A tool may raise `CancelledError` itself, or `KeyboardInterrupt` and other
    `BaseException`s; only a cancellation that was really requested for this
    task (asyncio counts requests in `Task.cancelling()`) must travel on.
    """
    if not isinstance(exc, anyio.get_cancelled_exc_class()):
        return False
    try:
        task = asyncio.current_task()
    except RuntimeError:  # not on asyncio (trio): its Cancelled cannot be faked by a tool
        return True
    cancelling = getattr(task, "cancelling", None)
    return task is None or cancelling is None or cancelling() > 0


class AsyncCloseable(ABC):
    """Owns something that must be released; `async with` releases it on exit.

    Subclasses implement `aclose()` (closing twice must be harmless). One that
    has to do work on entry (open sessions, start a task) overrides
    `__aenter__` and still returns itself.
    """

    @abstractmethod
    async def aclose(self) -> None:
        """Release what this object holds; calling it twice is harmless."""

    async def __aenter__(self) -> Self:
        return self

    async def __aexit__(
        self,
        exc_type: type[BaseException] | None,
        exc: BaseException | None,
        tb: TracebackType | None,
    ) -> None:
        await self.aclose()
