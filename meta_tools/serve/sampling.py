"""The MCP host's model as the categories' model on legacy connections, and call progress.

Legacy connections (2025-11-25): `LegacyHost` sends `sampling/createMessage`
to the client in the middle of the call. (2026-07-28: see `resume`.)
"""

from __future__ import annotations

import logging
from typing import Any

import anyio
import mcp_types
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata

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

__all__ = ["LegacyHost", "Progress", "error_result"]

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


class LegacyHost:
    """Samples through the client of a legacy connection, mid-call."""

    def __init__(self, ctx: ServerRequestContext[Any, Any]) -> None:
        self._ctx = ctx

    async def create_message(
        self, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools:
        return await self._ctx.session.send_request(
            mcp_types.CreateMessageRequest(params=params),
            mcp_types.CreateMessageResultWithTools,
            metadata=ServerMessageMetadata(related_request_id=self._ctx.request_id),
        )


def error_result(message: str) -> mcp_types.CallToolResult:
    """A tool-level error the calling model can read."""
    return mcp_types.CallToolResult(content=[mcp_types.TextContent(text=message)], is_error=True)
