"""`SamplingChatModel`: the category loops use the MCP host's own model, through sampling with tools.

The model has no client of its own: while the router serves an MCP call,
`meta_tools.serve` sets the *sampling host* of that call (a context
variable, so concurrent calls of different clients never mix), and every
`complete` sends `sampling/createMessage` with the category's tools to it.

Two eras, two hosts (both in `meta_tools.serve`):

- legacy connections (2025-11-25): the request goes to the client mid-call;
- 2026-07-28: a server cannot call the client mid-call, so the host raises
  `AnswerLater` (`meta_tools.llm.base`), the call returns `InputRequiredResult` with the run's state
  sealed in `request_state`, the client answers and retries (on any replica),
  and the run goes on from that state.
"""

from __future__ import annotations

from collections.abc import Iterator
from contextlib import contextmanager
from contextvars import ContextVar
from typing import Any, Protocol

import anyio
import mcp_types
from mcp import MCPError

from ..exceptions import ModelError, SamplingUnsupportedError
from ..support.json_text import loads
from .defaults import SAMPLING_MAX_TOKENS, TIMEOUT_S
from .types import AssistantTurn, ChatRequest, Message, ToolCall

__all__ = [
    "SamplingChatModel",
    "SamplingHost",
    "host_supports_tool_sampling",
    "sampling_host",
    "to_sampling_params",
    "to_turn",
]


class SamplingHost(Protocol):
    """Where a sampling request goes: the MCP client of the call being served."""

    async def create_message(
        self, params: mcp_types.CreateMessageRequestParams
    ) -> mcp_types.CreateMessageResultWithTools: ...


_HOST: ContextVar[SamplingHost | None] = ContextVar("meta_tools_sampling_host", default=None)


@contextmanager
def sampling_host(host: SamplingHost) -> Iterator[None]:
    """Route the sampling of everything run inside (and its child tasks) to `host`."""
    token = _HOST.set(host)
    try:
        yield
    finally:
        _HOST.reset(token)


def host_supports_tool_sampling(capabilities: mcp_types.ClientCapabilities | None) -> bool:
    """True when the client declared `sampling.tools`."""
    sampling = capabilities.sampling if capabilities is not None else None
    return sampling is not None and sampling.tools is not None


def _arguments(call: ToolCall) -> dict[str, Any]:
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        parsed = loads(call.arguments)
    except ValueError:
        return {"arguments": call.arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}


def _sampling_messages(
    messages: list[Message],
) -> tuple[str | None, list[mcp_types.SamplingMessage]]:
    """System text, and the conversation with consecutive tool results in one user message."""
    system = [m.content for m in messages if m.role == "system" and m.content]
    out: list[mcp_types.SamplingMessage] = []
    results: list[mcp_types.ToolResultContent] = []

    def flush() -> None:
        if results:
            out.append(mcp_types.SamplingMessage(role="user", content=list(results)))
            results.clear()

    for message in messages:
        if message.role == "system":
            continue
        if message.role == "tool":
            results.append(
                mcp_types.ToolResultContent(
                    tool_use_id=message.tool_call_id or "",
                    content=[mcp_types.TextContent(text=message.content)],
                )
            )
            continue
        flush()
        if message.role == "assistant" and message.tool_calls:
            blocks: list[mcp_types.SamplingMessageContentBlock] = []
            if message.content:
                blocks.append(mcp_types.TextContent(text=message.content))
            blocks += [
                mcp_types.ToolUseContent(id=c.id, name=c.name, input=_arguments(c))
                for c in message.tool_calls
            ]
            out.append(mcp_types.SamplingMessage(role="assistant", content=blocks))
        else:
            role = "assistant" if message.role == "assistant" else "user"
            text = mcp_types.TextContent(text=message.content)
            out.append(mcp_types.SamplingMessage(role=role, content=text))
    flush()
    return ("\n\n".join(system) or None), out


def to_sampling_params(
    request: ChatRequest, *, max_tokens: int, temperature: float | None = None
) -> mcp_types.CreateMessageRequestParams:
    """A chat request as `sampling/createMessage` parameters (its tools as MCP tools)."""
    system, messages = _sampling_messages(request.messages)
    tools = [
        mcp_types.Tool(
            name=tool.name,
            description=tool.description,
            input_schema=tool.parameters or {"type": "object"},
        )
        for tool in request.tools
    ]
    return mcp_types.CreateMessageRequestParams(
        messages=messages,
        system_prompt=system,
        max_tokens=max_tokens,
        temperature=temperature,
        tools=tools or None,
        tool_choice=mcp_types.ToolChoice(mode="auto") if tools else None,
    )


def to_turn(
    result: mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools,
) -> AssistantTurn:
    """The host model's answer as an assistant turn (text and tool calls)."""
    blocks = (
        result.content_as_list
        if isinstance(result, mcp_types.CreateMessageResultWithTools)
        else [result.content]
    )
    texts = [b.text for b in blocks if isinstance(b, mcp_types.TextContent)]
    calls = [
        ToolCall(id=b.id, name=b.name, arguments=dict(b.input))
        for b in blocks
        if isinstance(b, mcp_types.ToolUseContent)
    ]
    return AssistantTurn(text="\n".join(texts) or None, tool_calls=calls)


class SamplingChatModel:
    """A `ChatModel` that asks the MCP host's model (`model.provider = "sampling"`).

    It works only inside a call served by `meta_tools.serve` (elsewhere there
    is no host to ask) and only with hosts that declare `sampling.tools`.

    Args:
        max_tokens: the answer limit sent with every request.
        temperature: sent when set; the host may ignore it.
        timeout_s: how long one answer may take (the config's `model.timeout_s`); a host
            that has gone away must not keep the run waiting forever.
        ways_out: what to do instead, added to the error raised when no MCP call is served.
    """

    def __init__(
        self,
        *,
        max_tokens: int = SAMPLING_MAX_TOKENS,
        temperature: float | None = None,
        timeout_s: float = TIMEOUT_S,
        ways_out: str = "",
    ) -> None:
        self.max_tokens = max_tokens
        self.temperature = temperature
        self.timeout_s = timeout_s
        self.ways_out = ways_out

    async def complete(self, request: ChatRequest) -> AssistantTurn:
        """Ask the host's model.

        Raises:
            SamplingUnsupportedError: no MCP call is being served here.
            ModelError: the host refused or failed.
        """
        host = _HOST.get()
        if host is None:
            raise SamplingUnsupportedError(
                "model.provider 'sampling' uses the model of the MCP host that calls the router,"
                " so it works only while the router is served over MCP (meta-tools serve)."
                + (f" {self.ways_out}" if self.ways_out else "")
            )
        params = to_sampling_params(
            request, max_tokens=self.max_tokens, temperature=self.temperature
        )
        try:
            with anyio.fail_after(self.timeout_s):
                result = await host.create_message(params)
        except MCPError as exc:
            raise ModelError(f"the MCP host's model failed: {exc.message}") from exc
        except TimeoutError:
            raise ModelError(
                f"the MCP host's model did not answer within {self.timeout_s:g} s"
                " (model.timeout_s); has the client gone?"
            ) from None
        return to_turn(result)

    def __repr__(self) -> str:
        return f"SamplingChatModel(max_tokens={self.max_tokens}, timeout_s={self.timeout_s:g})"
