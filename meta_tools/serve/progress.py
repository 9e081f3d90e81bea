"""A served call's progress: each step of its category run, reported as MCP progress."""

from __future__ import annotations

import logging
from typing import Any

import anyio
from mcp.server import ServerRequestContext

from .._text import valid_utf8
from ..category.events import (
    Evaluated,
    ModelCalled,
    RunEvent,
    RunFinished,
    RunStarted,
    ToolFinished,
    ToolsSelected,
)

__all__ = ["Progress", "describe_event"]

logger = logging.getLogger("meta_tools.server")


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

    `ctx` is the request to report to (None: nobody to tell).
    """

    def __init__(self, ctx: ServerRequestContext[Any, Any] | None) -> None:
        self.ctx = ctx
        self.steps = 0

    async def __call__(self, event: RunEvent) -> None:
        ctx = self.ctx
        if ctx is None or isinstance(event, ModelCalled):  # prompts are for traces only
            return
        self.steps += 1
        try:
            await ctx.session.report_progress(self.steps, None, valid_utf8(describe_event(event)))
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.debug("progress not delivered (the client left): %r", exc)
