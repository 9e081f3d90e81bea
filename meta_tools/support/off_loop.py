"""Text work that grows with the text, kept off the event loop when the text is long.

Reading a reply for calls, checking calls against a run's text and reading the loop's
own note each pass over all the text they are given. On a few thousand characters
that is quicker than a thread hop; on a 100,000-character input it held the event
loop for a second on a loaded 2-core machine.
"""

from __future__ import annotations

from collections.abc import Callable
from typing import TypeVar

import anyio.to_thread

__all__ = ["INLINE_CHARS", "by_size"]

#: Text up to this many characters is worked on in the event loop; longer, in a thread.
INLINE_CHARS = 4_000

_T = TypeVar("_T")


async def by_size(chars: int, work: Callable[[], _T]) -> _T:
    """`work()`, in a worker thread when it reads more than `INLINE_CHARS` characters."""
    if chars <= INLINE_CHARS:
        return work()
    return await anyio.to_thread.run_sync(work)
