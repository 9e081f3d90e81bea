"""A served call's progress: each step of its category run, reported as MCP progress.

A host that asked for progress (its request carries a progress token) also
hears from a call that has no step to report, at least every `PROGRESS_EVERY_S`
seconds (a local model may think for a minute): hosts that reset their request
timeout on progress, as the MCP Inspector can, keep waiting for the result.
"""

from __future__ import annotations

import logging
from collections.abc import Awaitable, Callable
from typing import Any, TypeVar

import anyio
from mcp.server import ServerRequestContext

from ..category.events import (
    Evaluated,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)
from ..support.text import valid_utf8

__all__ = ["PROGRESS_EVERY_S", "Progress", "describe_event"]

logger = logging.getLogger("meta_tools.server")

PROGRESS_EVERY_S = 10.0
"""The longest a served call goes without progress, when its host asked for progress."""

T = TypeVar("T")


def describe_event(event: RunEvent) -> str:
    """One progress line per step of a category run."""
    match event:
        case RunStarted():
            return f"{event.category}: started"
        case ToolsSelected(tools=tools):
            return f"{event.category}: selected {', '.join(tools) or 'no tool'}"
        case ToolFinished(tool=tool, ok=True, duration_s=took):
            return f"{event.category}: {tool} finished in {took:.2f} s"
        case ToolFinished(tool=tool, error=error):
            return f"{event.category}: {tool} failed: {error}"
        case Evaluated(decision=decision):
            step = "more tools" if decision == "more_tools" else "the summary"
            return f"{event.category}: evaluated the results; next: {step}"
        case RunFinished(status=status):
            return f"{event.category}: finished ({status})"
    return f"{event.category}: {event.kind}"


class Progress:
    """An event sink that reports each step as MCP progress to the request being served.

    `ctx` is the request to report to (None: nobody to tell). Between steps,
    `kept_alive` reports "still working" whenever `every_s` seconds passed
    without a report.
    """

    def __init__(
        self, ctx: ServerRequestContext[Any, Any] | None, *, every_s: float = PROGRESS_EVERY_S
    ) -> None:
        self.ctx = ctx
        self.every_s = every_s
        self.steps = 0
        self._category = ""
        self._last_sent = 0.0

    @property
    def wanted(self) -> bool:
        """Whether the request asked for progress (it carries a progress token)."""
        meta = self.ctx.meta if self.ctx is not None else None
        return meta is not None and meta.get("progress_token") is not None

    async def __call__(self, event: RunEvent) -> None:
        if self.ctx is None or isinstance(event, ModelCalled):  # prompts are for traces only
            return
        self._category = event.category
        await self._send(describe_event(event))

    async def kept_alive(self, call: Callable[[], Awaitable[T]]) -> T:
        """Await `call()`, reporting "still working" whenever a step is `every_s` late.

        What `call()` raises (a suspended run, a `BaseException`, too) comes out as
        raised, not in an exception group.
        """
        if not self.wanted:
            return await call()
        outcome: list[T] = []
        failure: BaseException | None = None
        async with anyio.create_task_group() as group:
            group.start_soon(self._beat)
            try:
                outcome.append(await call())
            except anyio.get_cancelled_exc_class():
                raise
            except BaseException as exc:  # raised again below, as it was, not in a group
                failure = exc
            group.cancel_scope.cancel()
        if failure is not None:
            raise failure
        return outcome[0]

    async def _beat(self) -> None:
        started = self._last_sent = anyio.current_time()
        while True:
            await anyio.sleep_until(self._last_sent + self.every_s)
            now = anyio.current_time()
            if now >= self._last_sent + self.every_s:  # no step was reported meanwhile
                who = f"{self._category}: " if self._category else ""
                await self._send(f"{who}still working ({now - started:.0f} s)")

    async def _send(self, message: str) -> None:
        ctx = self.ctx
        if ctx is None:
            return
        self.steps += 1
        self._last_sent = anyio.current_time()
        try:
            await ctx.session.report_progress(self.steps, None, valid_utf8(message))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.debug("progress not delivered (the client left): %r", exc)
