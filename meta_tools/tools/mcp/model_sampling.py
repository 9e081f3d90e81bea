"""`ModelSampling`: an MCP server's sampling requests answered by one of our models.

A level-1 server that asks for a model's message during a call
(`sampling/createMessage`) gets the answer of a `ChatModel` (the router's own,
say): its messages, system prompt and tools become a chat request, and the
model's turn becomes the sampling result (text, or tool uses).
"""

from __future__ import annotations

import json
from collections.abc import Callable
from typing import Any

import mcp_types

from ...exceptions import ModelError
from ...llm.base import ChatModel
from ...llm.types import ChatRequest, Message, ToolCall, ToolDefinition
from .asks import SamplingRequest

__all__ = ["ModelSampling", "to_chat_request"]


def _text(blocks: list[Any]) -> str:
    parts = []
    for block in blocks:
        if isinstance(block, mcp_types.TextContent):
            parts.append(block.text)
        elif isinstance(block, mcp_types.ToolResultContent):
            continue
        elif not isinstance(block, mcp_types.ToolUseContent):
            parts.append(f"[{getattr(block, 'type', 'content')} left out]")
    return "\n".join(parts)


def to_chat_request(params: mcp_types.CreateMessageRequestParams) -> ChatRequest:
    """A sampling request as a chat request: system prompt, messages, tool uses and results."""
    messages = (
        [Message(role="system", content=params.system_prompt)] if params.system_prompt else []
    )
    for message in params.messages:
        blocks = message.content_as_list
        for result in (b for b in blocks if isinstance(b, mcp_types.ToolResultContent)):
            content = _text(list(result.content)) if result.content else ""
            messages.append(Message(role="tool", content=content, tool_call_id=result.tool_use_id))
        uses = [b for b in blocks if isinstance(b, mcp_types.ToolUseContent)]
        calls = [ToolCall(id=u.id, name=u.name, arguments=dict(u.input)) for u in uses]
        text = _text(blocks)
        if text or calls or not any(isinstance(b, mcp_types.ToolResultContent) for b in blocks):
            messages.append(Message(role=message.role, content=text, tool_calls=calls))
    tools = [
        ToolDefinition(name=t.name, description=t.description or "", parameters=t.input_schema)
        for t in params.tools or []
    ]
    return ChatRequest(messages=messages, tools=tools)


class ModelSampling:
    """A `SamplingHandler` that answers with a `ChatModel`.

    Args:
        model: the model, or a function that gives the current one (a router's model
            changes on a reload that changes its `model` section).
        name: the model name the answers carry (default: the model's `name`, if any).
    """

    def __init__(self, model: ChatModel | Callable[[], ChatModel], *, name: str | None = None):
        self._model = model
        self._name = name

    def _current(self) -> ChatModel:
        model = self._model
        return model if isinstance(model, ChatModel) else model()

    async def __call__(
        self, request: SamplingRequest
    ) -> (
        mcp_types.CreateMessageResult | mcp_types.CreateMessageResultWithTools | mcp_types.ErrorData
    ):
        model = self._current()
        name = self._name or str(getattr(model, "name", None) or type(model).__name__)
        try:
            turn = await model.complete(to_chat_request(request.params))
        except ModelError as exc:
            return mcp_types.ErrorData(
                code=mcp_types.INTERNAL_ERROR, message=f"the model could not answer: {exc}"
            )
        text = mcp_types.TextContent(text=turn.text or "")
        if not request.params.tools:
            return mcp_types.CreateMessageResult(role="assistant", model=name, content=text)
        uses: list[mcp_types.SamplingMessageContentBlock] = [
            mcp_types.ToolUseContent(id=c.id, name=c.name, input=_arguments(c))
            for c in turn.tool_calls
        ]
        return mcp_types.CreateMessageResultWithTools(
            role="assistant",
            model=name,
            content=([text] if turn.text else []) + uses or [text],
            stop_reason="toolUse" if uses else "endTurn",
        )


def _arguments(call: ToolCall) -> dict[str, Any]:
    if isinstance(call.arguments, dict):
        return call.arguments
    try:
        parsed = json.loads(call.arguments)
    except ValueError:
        return {"arguments": call.arguments}
    return parsed if isinstance(parsed, dict) else {"arguments": parsed}
