"""The calls in flight on one MCP session, and the answers to what their server asks during them.

`CallBook` keeps each call of a source while it runs (its tool, its context,
its progress sink and the questions declined during it), and turns the SDK's
client callbacks (elicitation, sampling, progress, log messages) into calls of
the source's handlers for the call that asked.
"""

from __future__ import annotations

import contextvars
import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass, field

import mcp_types
from mcp.client.session import ClientRequestContext

from ...support.text import valid_utf8
from .asks import (
    ElicitationHandler,
    ElicitationRequest,
    SamplingHandler,
    SamplingRequest,
    ToolProgress,
    current_progress,
    with_defaults,
)

__all__ = ["CallBook", "InFlight"]

logger = logging.getLogger("meta_tools.mcp")

_MAX_NOTES = 8
"""Declined questions remembered per call (a server that asks in a loop is cut short)."""

_CURRENT: ContextVar[InFlight | None] = ContextVar("meta_tools_mcp_call", default=None)


@dataclass
class InFlight:
    """One tool call on the session, while it runs."""

    tool: str
    context: contextvars.Context
    progress: ToolProgress | None
    declined: list[str] = field(default_factory=list)

    def note(self, line: str) -> None:
        if len(self.declined) < _MAX_NOTES:
            self.declined.append(line)


class CallBook:
    """The calls in flight on a source's session, and its answers to their server's questions.

    Args:
        server: the source's name (named in every answer).
        elicitation: who answers `elicitation/create`; none: declined.
        sampling: who answers `sampling/createMessage`; none: declined.
    """

    def __init__(
        self,
        server: str,
        *,
        elicitation: ElicitationHandler | None = None,
        sampling: SamplingHandler | None = None,
    ) -> None:
        self.server = server
        self.elicitation = elicitation
        self.sampling = sampling
        self._calls: list[InFlight] = []

    @contextmanager
    def call(self, tool: str) -> Iterator[InFlight]:
        """Keep the call of `tool` while it runs (in the caller's task)."""
        running = InFlight(tool, contextvars.copy_context(), current_progress())
        self._calls.append(running)
        token = _CURRENT.set(running)
        try:
            yield running
        finally:
            _CURRENT.reset(token)
            self._calls.remove(running)

    def _asking(self) -> InFlight | str:
        """The call a question belongs to, or why none can be told."""
        current = _CURRENT.get()
        if current is not None and current in self._calls:
            return current  # 2026-07-28: the question came inside its call
        if len(self._calls) == 1:
            return self._calls[0]
        if not self._calls:
            return "it came while none of its tools was being called"
        return (
            f"{len(self._calls)} calls to it were running at once and its connection (protocol"
            " 2025-11-25) does not say which one asked"
        )

    async def elicit(
        self, ctx: ClientRequestContext, params: mcp_types.ElicitRequestParams
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        """The SDK's elicitation callback."""
        asking = self._asking()
        if isinstance(asking, str):
            return self._decline(None, "input from the user", params.message, asking)
        if self.elicitation is None:
            return self._decline(asking, "input from the user", params.message, _NO_HANDLER)
        request = ElicitationRequest(self.server, asking.tool, params, asking.context)
        answer = await self.elicitation(request)
        if isinstance(answer, mcp_types.ErrorData):
            return self._decline(asking, "input from the user", params.message, answer.message)
        return with_defaults(params, answer)

    async def sample(
        self, ctx: ClientRequestContext, params: mcp_types.CreateMessageRequestParams
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        """The SDK's sampling callback."""
        asking = self._asking()
        what = "a model's message"
        if isinstance(asking, str):
            return self._decline(None, what, None, asking)
        if self.sampling is None:
            return self._decline(asking, what, None, _NO_HANDLER)
        answer = await self.sampling(
            SamplingRequest(self.server, asking.tool, params, asking.context)
        )
        if isinstance(answer, mcp_types.ErrorData):
            return self._decline(asking, what, None, answer.message)
        return answer

    def _decline(
        self, call: InFlight | None, what: str, message: str | None, why: str
    ) -> mcp_types.ErrorData:
        asked = f" ({valid_utf8(message)[:200]!r})" if message else ""
        line = f"MCP server {self.server!r} asked for {what}{asked}; meta-tools declined: {why}"
        logger.info("%s", line)
        if call is not None:
            call.note(line)
        return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=line)

    async def log(self, params: mcp_types.LoggingMessageNotificationParams) -> None:
        """The SDK's logging callback: a log line of the call in flight, as its progress."""
        data = params.data if isinstance(params.data, str) else repr(params.data)
        line = f"{params.level}: {valid_utf8(data)[:500]}"
        asking = self._asking()
        if isinstance(asking, str) or asking.progress is None:
            logger.debug("MCP server %r logged %s", self.server, line)
            return
        await asking.progress(self.server, asking.tool, line)


_NO_HANDLER = (
    "nobody here can answer it (no handler was given to meta-tools, or the MCP host above"
    " did not declare the capability); do the task without it, or tell the user what"
    " the server needs"
)


async def forward_progress(
    call: InFlight, server: str, progress: float, total: float | None, message: str | None
) -> None:
    """A progress notification of `call`, to its sink."""
    if call.progress is None:
        return
    done = f"{progress:g}/{total:g}" if total else f"{progress:g}"
    line = f"{done} {valid_utf8(message)[:500]}" if message else done
    await call.progress(server, call.tool, line)
