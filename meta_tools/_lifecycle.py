"""`AsyncCloseable`: the one way our resource owners work as async context managers."""

from __future__ import annotations

from abc import ABC, abstractmethod
from types import TracebackType

from typing_extensions import Self

__all__ = ["AsyncCloseable"]


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
