"""A level-1 server's questions during a served call, passed up to the MCP host that made it.

`serve` gives the router `HostAnswers` as its elicitation and sampling handlers
(so the level-1 sessions declare both), and marks each call it serves with the
host that made it (`serving`). When a level-1 server asks during that call:

- the host connected with 2025-11-25 and declared the capability (elicitation:
  the mode asked, `form` or `url`; sampling): the request goes to the host
  mid-call, tied to its call, and the host's answer goes back down;
- the host did not declare it: declined, saying so;
- the host connected with 2026-07-28: declined (sampling: answered by the
  router's own model when it has one, as when the host did not declare it). In that era a server cannot ask
  its client mid-call; it would have to stop the whole category run, with the
  level-1 server's own pending call, and go on when the host retries. The router
  carries only a run waiting for its model that way, not a level-1 call.

Each refusal is a line the category model reads in the tool's error.
"""

from __future__ import annotations

import logging
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, TypeVar

import anyio
import mcp_types
from mcp import MCPError
from mcp.server import ServerRequestContext
from mcp.shared.message import ServerMessageMetadata
from mcp_types.version import MODERN_PROTOCOL_VERSIONS

from ..support.text import valid_utf8
from ..tools.mcp.asks import ElicitationRequest, SamplingHandler, SamplingRequest, reporting_to
from .progress import Progress

logger = logging.getLogger("meta_tools.server")

__all__ = ["HostAnswers", "passed_up", "serving"]

_HOST: ContextVar[ServerRequestContext[Any, Any] | None] = ContextVar(
    "meta_tools_served_request", default=None
)


@contextmanager
def serving(ctx: ServerRequestContext[Any, Any]) -> Iterator[None]:
    """Mark everything run inside as part of the host's request `ctx`."""
    token = _HOST.set(ctx)
    try:
        yield
    finally:
        _HOST.reset(token)


@contextmanager
def passed_up(progress: Progress) -> Iterator[None]:
    """Run a served call: its level-1 servers' questions go to its host, their progress too."""
    if progress.ctx is None:
        yield
        return
    with serving(progress.ctx), reporting_to(_ProgressLines(progress)):
        yield


class _ProgressLines:
    """A level-1 call's progress and log lines, as progress of the served call."""

    def __init__(self, progress: Progress) -> None:
        self._progress = progress

    async def __call__(self, server: str, tool: str, line: str) -> None:
        ctx = self._progress.ctx
        if ctx is None:
            return
        self._progress.steps += 1  # one count with the run's steps: progress only grows
        try:
            await ctx.session.report_progress(
                self._progress.steps, None, valid_utf8(f"{server}/{tool}: {line}")
            )
        except (anyio.BrokenResourceError, anyio.ClosedResourceError) as exc:
            logger.debug("progress not delivered (the client left): %r", exc)


_MODERN = (
    "the MCP host connected with protocol 2026-07-28, where a server cannot ask its client"
    " during a call, and meta-tools does not carry a level-1 server's pending question"
    " across the host's retries; a host on protocol 2025-11-25 gets such questions"
)


def _refused(why: str) -> mcp_types.ErrorData:
    return mcp_types.ErrorData(code=mcp_types.INVALID_REQUEST, message=why)


class HostAnswers:
    """The served router's elicitation and sampling handlers: the host of the call answers.

    Args:
        sampling: answers a sampling request that the host cannot (the router's own
            model, when it has one); none: declined.
    """

    def __init__(self, *, sampling: SamplingHandler | None = None) -> None:
        self.fallback = sampling

    async def elicit(
        self, request: ElicitationRequest
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData:
        ctx = request.context.run(_HOST.get)
        if ctx is None:
            return _refused("no MCP host is waiting on this call")
        if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
            return _refused(_MODERN)
        mode = request.params.mode
        if not _declared_elicitation(ctx.session.client_capabilities, mode):
            return _refused(f"the MCP host did not declare {mode} elicitation")
        return await _ask(
            ctx, mcp_types.ElicitRequest(params=request.params), mcp_types.ElicitResult
        )

    async def sample(
        self, request: SamplingRequest
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        ctx = request.context.run(_HOST.get)
        why = _host_cannot_sample(ctx, request.params)
        if why is not None or ctx is None:
            if self.fallback is not None:
                return await self.fallback(request)
            return _refused(why or "no MCP host is waiting on this call")
        message = mcp_types.CreateMessageRequest(params=request.params)
        if request.params.tools:
            return await _ask(ctx, message, mcp_types.CreateMessageResultWithTools)
        return await _ask(ctx, message, mcp_types.CreateMessageResult)


def _host_cannot_sample(
    ctx: ServerRequestContext[Any, Any] | None, params: mcp_types.CreateMessageRequestParams
) -> str | None:
    """Why the host of `ctx` cannot answer this sampling request; None when it can."""
    if ctx is None:
        return "no MCP host is waiting on this call"
    if ctx.protocol_version in MODERN_PROTOCOL_VERSIONS:
        return _MODERN
    capabilities = ctx.session.client_capabilities
    sampling = capabilities.sampling if capabilities is not None else None
    if sampling is None:
        return "the MCP host did not declare sampling"
    if params.tools and sampling.tools is None:
        return "the MCP host did not declare sampling with tools"
    return None


def _declared_elicitation(capabilities: mcp_types.ClientCapabilities | None, mode: str) -> bool:
    """Whether the host declared elicitation in `mode` (an empty `elicitation` means form)."""
    declared = capabilities.elicitation if capabilities is not None else None
    if declared is None:
        return False
    if declared.form is None and declared.url is None:
        return mode == "form"
    return (declared.form if mode == "form" else declared.url) is not None


_R = TypeVar("_R", bound=mcp_types.Result)


async def _ask(
    ctx: ServerRequestContext[Any, Any],
    request: mcp_types.ElicitRequest | mcp_types.CreateMessageRequest,
    answer: type[_R],
) -> _R | mcp_types.ErrorData:
    """Send `request` to the host, tied to the call it serves; its refusal as `ErrorData`."""
    try:
        return await ctx.session.send_request(
            request, answer, metadata=ServerMessageMetadata(related_request_id=ctx.request_id)
        )
    except MCPError as exc:
        return _refused(f"the MCP host refused: {exc.error.message}")
