"""What an MCP server asks of us during a tool call: input from the user, the model, progress.

A level-1 server may, while it runs a tool, send `elicitation/create` (ask the
user), `sampling/createMessage` (ask a model), progress and log messages. A
source answers them with the handlers it was given (`McpToolSource(elicitation=...,
sampling=...)`, or `MetaManager.from_config(...)`): it declares the matching
client capability only when it has one, and declines otherwise, with a reason
the category model reads in the tool's result.

Each question belongs to one call: on a 2026-07-28 connection it arrives inside
that call (`InputRequiredResult`); on a legacy connection it arrives on the
session, and belongs to the one call in flight there (with several at once, the
connection does not say which asked, so it is declined). A handler is told the
server, the tool and the context of the call that asked (`request.context`:
read the caller's context variables with `request.context.run(var.get)`).

Progress and log messages of a call go to the `ToolProgress` sink set around
the call (`reporting_to`), as one line each.
"""

from __future__ import annotations

import contextvars
from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from dataclasses import dataclass
from typing import Any, Protocol

import mcp_types

__all__ = [
    "ElicitationHandler",
    "ElicitationRequest",
    "SamplingHandler",
    "SamplingRequest",
    "ToolProgress",
    "current_progress",
    "reporting_to",
    "with_defaults",
]


@dataclass(frozen=True)
class ElicitationRequest:
    """An MCP server's `elicitation/create` during a call of one of its tools.

    Attributes:
        server: the server's name in the config.
        tool: the server's tool whose call asked (its own name).
        params: what it asks: a form (`message`, `requested_schema`) or a URL to visit.
        context: the context of the call that asked (its context variables).
    """

    server: str
    tool: str
    params: mcp_types.ElicitRequestParams
    context: contextvars.Context


class ElicitationHandler(Protocol):
    """Answers an MCP server's question to the user (accept with content, decline, cancel).

    Defaults of the requested schema fill the fields an accepting answer leaves out.
    Return `ErrorData` to refuse with a reason (the category model reads it).
    """

    async def __call__(
        self, request: ElicitationRequest
    ) -> mcp_types.ElicitResult | mcp_types.ErrorData: ...


@dataclass(frozen=True)
class SamplingRequest:
    """An MCP server's `sampling/createMessage` during a call of one of its tools."""

    server: str
    tool: str
    params: mcp_types.CreateMessageRequestParams
    context: contextvars.Context


class SamplingHandler(Protocol):
    """Answers an MCP server's request for a model's message."""

    async def __call__(
        self, request: SamplingRequest
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ): ...


class ToolProgress(Protocol):
    """Told of a level-1 call's progress and log lines (`server`, `tool`, the line)."""

    async def __call__(self, server: str, tool: str, line: str) -> None: ...


_PROGRESS: ContextVar[ToolProgress | None] = ContextVar("meta_tools_tool_progress", default=None)


@contextmanager
def reporting_to(sink: ToolProgress) -> Iterator[None]:
    """Send the progress of MCP calls made inside (and in its child tasks) to `sink`."""
    token = _PROGRESS.set(sink)
    try:
        yield
    finally:
        _PROGRESS.reset(token)


def current_progress() -> ToolProgress | None:
    """The progress sink of the calls made here, if any."""
    return _PROGRESS.get()


def with_defaults(
    params: mcp_types.ElicitRequestParams, result: mcp_types.ElicitResult
) -> mcp_types.ElicitResult:
    """An accepted form answer with the requested schema's defaults for the fields it left out.

    (SEP-1034: a field's `default` stands for the user's answer when none was given.)
    """
    if result.action != "accept" or not isinstance(params, mcp_types.ElicitRequestFormParams):
        return result
    properties = params.requested_schema.get("properties")
    if not isinstance(properties, dict):
        return result
    content: dict[str, Any] = dict(result.content or {})
    for name, schema in properties.items():
        if isinstance(schema, dict) and "default" in schema and name not in content:
            content[name] = schema["default"]
    return result.model_copy(update={"content": content})
